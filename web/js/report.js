//! The offline report viewer. A report file made by `recall report` inlines
//! this viewer, the wasm core and its shards; opened from `file://` with no
//! server and no network it lists the sessions, shows their entries and
//! searches them with the same core as the daemon. Further report files can
//! be opened with the file picker and are searched together. Served by the
//! daemon at `/report`, it starts empty and opens report files the same way.
//!
//! For automation, `window.recall` exposes `ready` (a promise),
//! `search(request)` (the §4 response object) and `sessions()` (the keys).

import { byId, h, replace, append } from './dom.js';
import { Engine, loadWasm } from './engine.js';
import { decodePayload, payloadText, payloadOfFile, mergeManifests, fromBase64, gunzip, WASM_TYPE } from './bundle.js';
import { sessionCard, coverageNode, stateNote } from './results.js';
import { SessionView } from './session.js';
import { readFilters } from './filters.js';
import { renderMarkdown } from './markdown.js';
import { toolCard } from './toolcards.js';
import { when, badge, sessionBadges } from './format.js';

const DEBOUNCE_MS = 150;
/** The manifest of a viewer that holds no report yet. */
const EMPTY = { schema: 1, parser_version: 0, store_id: '', revision: 0, updated_at_ms: 0, sessions: {}, tombstones: {} };

const els = {
  q: byId('q'),
  form: byId('filters'),
  results: byId('results'),
  note: byId('note'),
  session: byId('session'),
  reports: byId('reports'),
  files: byId('open-files'),
};

/** Loaded reports: `{label, manifest: bytes, generations: [[name, bytes]]}`. */
const reports = [];
let engine = null;
let cursor = null;
let lastRequest = null;
let timer = null;

function unwrap(body) {
  if (body && body.ok === false) {
    const e = new Error(body.message || body.error);
    e.code = body.error;
    throw e;
  }
  return body;
}

/** The viewer's backend: the same calls as the daemon's, answered in the page. */
const backend = {
  kind: 'report',
  search: async (req) => unwrap(engine.search(req)),
  session: async (key, options) => unwrap(engine.session(key, options)),
  trace: async (key) => unwrap(engine.trace(key)),
  sessionQuery: async (key, request) => unwrap(engine.sessionQuery(key, request)),
};

const sessionView = new SessionView(els.session, () => backend, (key) => sessionView.open(key), () => readFilters(els.form).scope || 'conversation', { markdown: renderMarkdown, tools: toolCard });

async function loadCore() {
  const el = document.querySelector(`script[type="${WASM_TYPE}"]`);
  if (el) return loadWasm(await gunzip(fromBase64(el.textContent)));
  return loadWasm(new URL('../pkg/recall_core_bg.wasm', import.meta.url));
}

/** Rebuilds the engine over every loaded report. */
function rebuild() {
  const next = new Engine();
  const manifests = [];
  for (const r of reports) {
    for (const [name, bytes] of r.generations) next.addGeneration(name, bytes);
    manifests.push(JSON.parse(new TextDecoder().decode(r.manifest)));
  }
  next.setManifest(reports.length === 1 ? reports[0].manifest : mergeManifests(manifests.length ? manifests : [EMPTY]));
  engine = next;
  const n = Object.keys(engine.manifest.sessions || {}).length;
  replace(els.reports, `${reports.length} ${reports.length === 1 ? 'report' : 'reports'} · ${n} ${n === 1 ? 'session' : 'sessions'}`,
    ...reports.map((r) => h('span', { class: 'report-name' }, ` · ${r.label}`)));
}

/** Every session the core's list gives (newest activity first), following its cursor. */
function allSessions() {
  const out = [];
  let cursor;
  do {
    const page = unwrap(engine.sessions({ limit: 500, ...(cursor ? { cursor } : {}) }));
    out.push(...page.sessions.map((s) => [s.session_key, s]));
    cursor = page.cursor;
  } while (cursor);
  return out;
}

/** Lists the sessions (no query), as the daemon's `GET /api/sessions` orders them. */
function listSessions() {
  const sessions = allSessions();
  replace(els.note);
  if (!sessions.length) {
    replace(els.results, h('p', { class: 'hint' }, 'This viewer holds no sessions yet: open a report file made by `recall report`.'));
    return;
  }
  replace(els.results, ...sessions.map(([key, e]) => h('article', { class: 'session-card', dataset: { key } },
    h('header', {},
      h('button', { class: 'title link', type: 'button', onclick: () => sessionView.open(key) }, e.title || e.session_id),
      ...sessionBadges({ source: e.source, source_gone: e.source_gone }),
      e.parent ? badge(e.parent.relation, 'info', `of ${e.parent.key}`) : null,
      h('span', { class: 'count' }, `${e.messages ?? 0} messages`)),
    h('div', { class: 'session-meta' },
      e.cwd ? h('span', { class: 'cwd' }, e.cwd) : null,
      e.branch ? h('span', { class: 'branch' }, e.branch) : null,
      h('time', {}, when(e.updated_ms))))));
}

function schedule() {
  clearTimeout(timer);
  timer = setTimeout(() => run(), DEBOUNCE_MS);
}

function run(more = false) {
  if (!engine) return;
  const q = els.q.value;
  if (q.trim().length < 2) {
    listSessions();
    return;
  }
  const req = more ? { ...lastRequest, cursor } : { q, ...readFilters(els.form) };
  let res;
  try {
    res = unwrap(engine.search(req));
  } catch (e) {
    replace(els.note, h('p', { class: 'error', role: 'alert' }, `Search failed: ${e.message}`));
    if (!more) replace(els.results);
    return;
  }
  if (!more) lastRequest = req;
  cursor = res.cursor || null;
  const note = stateNote(res);
  replace(els.note, note ? h('p', { class: 'notice' }, note) : null);
  if (!more) {
    replace(els.results);
    if (!res.sessions.length) {
      append(els.results, [h('p', { class: 'empty' }, 'No conversation in these reports matches.'), coverageNode(res.coverage)]);
      return;
    }
  } else {
    els.results.querySelector('.more')?.remove();
  }
  append(els.results, res.sessions.map((s) => sessionCard(s, (session, hit) => sessionView.open(session.session_key, hit))));
  if (res.cursor) append(els.results, [h('button', { type: 'button', class: 'more', onclick: () => run(true) }, 'More results')]);
}

async function openFiles(files) {
  for (const file of files) {
    try {
      const payload = await payloadOfFile(file);
      reports.push({ label: file.name, ...payload });
    } catch (e) {
      replace(els.note, h('p', { class: 'error', role: 'alert' }, `${file.name}: ${e.message}`));
      return;
    }
  }
  rebuild();
  run();
}

async function start() {
  await loadCore();
  const text = payloadText(document);
  if (text) {
    const payload = await decodePayload(text);
    reports.push({ label: document.title.replace(/^recall report — /, '') || 'this report', ...payload });
    if (payload.query && !els.q.value) els.q.value = payload.query;
  }
  rebuild();
  run();
}

els.q.addEventListener('input', schedule);
els.form.addEventListener('change', () => run());
els.form.addEventListener('submit', (e) => e.preventDefault());
els.files.addEventListener('change', () => openFiles([...els.files.files]));
byId('open-label').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' || e.key === ' ') {
    e.preventDefault();
    els.files.click();
  }
});
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && !els.session.hidden) sessionView.close();
});

const ready = start().catch((e) => {
  replace(els.note, h('p', { class: 'error', role: 'alert' }, `This report cannot be opened: ${e.message}`));
  throw e;
});

window.recall = {
  ready,
  search: (request) => engine.search(request),
  sessions: () => Object.keys(engine?.manifest.sessions || {}),
};
ready.then(() => {
  document.documentElement.dataset.ready = 'true';
}, () => {
  document.documentElement.dataset.ready = 'error';
});
