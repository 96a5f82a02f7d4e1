//! The dashboard: the home page (no query), search as you type (from 2
//! characters, 225 ms debounce, in-flight requests aborted and stale answers
//! dropped) with the metadata lane above the hits, filters, paging by cursor
//! (restart on 410), indexing status, the demo banner, the session panel with
//! Markdown, the palette, j/k navigation, offline mode, and deep links: every
//! view is a URL (back/forward walk them, a reload restores one).

import { byId, h, replace, append } from './dom.js';
import { online } from './api.js';
import * as offlineStore from './offline.js';
import { sessionCard, coverageNode, stateNote, hostsNote } from './results.js';
import { rememberHosts } from './hosts.js';
import { SessionView, encodeLocator, decodeLocator } from './session.js';
import { Palette } from './palette.js';
import { readForm, request as toRequest, writeFilters, fromUrl, toUrl, preset, rangesToParam, rangesFromParam, noteHosts } from './filters.js';
import { renderHome, renderLane } from './home.js';
import { renderMarkdown } from './markdown.js';
import { size, when } from './format.js';
import { SettingsPane } from './settings.js';
import { Live } from './live.js';
import { narrow, wireMenu, FilterBar } from './layout.js';
import { toolCard } from './toolcards.js';
import { DeepSearch } from './deep.js';

const DEBOUNCE_MS = 225;
const MIN_CHARS = 2;
const TIMEOUT_RETRIES = 4;
/**
 * Most pages followed by themselves while they find nothing (a page can stop
 * before an oversized shard with no hit: the next one continues there).
 */
const FOLLOW_EMPTY = 100;

const els = {
  q: byId('q'),
  form: byId('filters'),
  results: byId('results'),
  deep: byId('deep'),
  hits: byId('hits'),
  lane: byId('lane'),
  demo: byId('demo-banner'),
  note: byId('note'),
  status: byId('index-status'),
  session: byId('session'),
  modeBadge: byId('mode-badge'),
  offlineBtn: byId('offline-btn'),
  progress: byId('download'),
  palette: byId('palette'),
  settings: byId('settings'),
  settingsBtn: byId('settings-btn'),
  menuBtn: byId('menu-btn'),
  menu: byId('menu'),
  paletteBtn: byId('palette-btn'),
  filtersBtn: byId('filters-btn'),
  chips: byId('filter-chips'),
};

let backend = online;
let timer = null;
let controller = null;
let generation = 0;
let lastRequest = null;
let cursor = null;
let coverage = null;
let lastInputAt = 0;
let lastStatus = null;
/** True while a URL is being applied (back/forward, reload): no new history entries. */
let restoring = false;
/** The query and filters last shown, so back/forward to the same search does not rerun it. */
let shownKey = null;

/** True while the open session's view is a history entry this page pushed (Back pops it). */
let sessionPushed = false;

const deepSearch = new DeepSearch(els.deep, { onOpen: (key, hit) => openSession(key, hit) });
const sessionView = new SessionView(els.session, () => backend, (key) => openSession(key, null),
  () => toRequest(readForm(els.form)).scope || 'conversation',
  {
    onChange: (open) => {
      const opening = Boolean(open.key) && !document.body.classList.contains('session-open');
      toUrl(viewState(), { push: !restoring });
      if (opening) sessionPushed = !restoring;
      if (!open.key) sessionPushed = false;
      document.body.classList.toggle('session-open', Boolean(open.key));
    },
    markdown: renderMarkdown,
    tools: toolCard,
    // On a phone the panel is a full-screen view: Back is the history entry its opening pushed.
    back: () => {
      if (!narrow() || !sessionPushed) return false;
      history.back();
      return true;
    },
  });

/** Closes the session panel the way its Back button does. */
function closeSession() {
  if (!sessionView.back()) sessionView.close();
}

// ---- live updates (`GET /api/events`; online only) ----

const HOME_REFRESH_MS = 2000;
let homeRefresh = null;
// A forgotten session leaves the list and the results at once.
document.addEventListener('recall:forgotten', () => {
  pollStatus();
  if (els.q.value.trim().length < MIN_CHARS) showIdle();
  else if (lastRequest) runSearch(lastRequest);
});
const liveNote = h('div', { class: 'live-note', role: 'status', hidden: true });
els.hits.before(liveNote);
const live = new Live({
  view: sessionView,
  backend: () => backend,
  note: liveNote,
  search: () => (els.q.value.trim().length >= MIN_CHARS ? lastRequest : null),
  run: (req) => runSearch(req),
  onRevision: () => {
    pollStatus();
    // The home list follows the index (at most every HOME_REFRESH_MS).
    if (els.q.value.trim().length < MIN_CHARS && !homeRefresh) {
      homeRefresh = setTimeout(() => {
        homeRefresh = null;
        if (els.q.value.trim().length < MIN_CHARS) showIdle({ refresh: true });
      }, HOME_REFRESH_MS);
    }
  },
});

/** §4 request fields of the search box and the filters. */
function request() {
  return { q: els.q.value, ...toRequest(readForm(els.form)) };
}

/** The whole view as URL fields: query, filters, open session, located hit. */
function viewState() {
  const st = { q: els.q.value, ...readForm(els.form) };
  const open = sessionView.current();
  if (open.key) {
    st.session = open.key;
    if (open.hit?.locator) {
      st.hit = encodeLocator(open.hit.locator);
      if (open.hit.ranges?.length) st.hl = rangesToParam(open.hit.ranges);
    } else if (open.offset) {
      st.offset = String(open.offset);
    }
  }
  return st;
}

/** The list filters of `/api/sessions` (source, cwd, since, until, branch, model). */
function listFilters() {
  const st = readForm(els.form);
  const req = toRequest(st);
  const out = {};
  for (const k of ['source', 'cwd', 'since', 'until', 'model']) if (req[k]) out[k] = req[k];
  if (st.branch) out.branch = st.branch;
  return out;
}

/** A pause in typing this long starts a new history entry. */
const NEW_ENTRY_AFTER_MS = 1500;

/**
 * Schedules a search after the debounce; shorter input shows the home page.
 * `push` = this is a new view for back/forward (a filter picked, typing
 * after a pause); a burst of keystrokes stays one history entry.
 */
function schedule({ push = false, typing = false } = {}) {
  const now = performance.now();
  // Typing after a pause, or the first keystroke on the home page, is a new view.
  const fromHome = !new URLSearchParams(location.search).get('q');
  const paused = typing && (fromHome || now - lastInputAt > NEW_ENTRY_AFTER_MS);
  lastInputAt = now;
  clearTimeout(timer);
  const req = request();
  if (!restoring) toUrl(viewState(), { push: push || paused });
  filterBar.update();
  shownKey = JSON.stringify({ ...req, branch: readForm(els.form).branch || '' });
  if (req.q.trim().length < MIN_CHARS) {
    controller?.abort();
    generation += 1;
    showIdle();
    return;
  }
  timer = setTimeout(() => runSearch(req), DEBOUNCE_MS);
}

let homeController = null;

/**
 * The home page (no query). A `refresh` (the index moved, coverage arrived)
 * keeps the page on screen and swaps in the new one when it is ready, so the
 * list never blanks under the reader; a user's change shows a busy box.
 */
function showIdle({ refresh = false } = {}) {
  const hint = h('p', { class: 'hint' }, `Type at least ${MIN_CHARS} characters to search every conversation.`);
  homeController?.abort();
  const shown = els.hits.querySelector('.home-box:not([aria-busy])');
  if (!refresh || !shown || !backend.sessions) {
    replace(els.note);
    els.lane.hidden = true;
    replace(els.lane);
  }
  if (!backend.sessions) {
    replace(els.hits, hint, coverage ? coverageNode(coverage) : null);
    return;
  }
  const box = h('div', { class: 'home-box', 'aria-busy': 'true' });
  const swap = refresh && shown;
  if (!swap) replace(els.hits, hint, box);
  const mine = new AbortController();
  homeController = mine;
  const st = readForm(els.form);
  renderHome(box, {
    api: backend,
    filters: listFilters(),
    status: lastStatus,
    selectedDay: st.since && st.since === st.until ? st.since : '',
    signal: mine.signal,
    on: {
      open: (s) => openSession(s.session_key, null),
      day: (day) => setFilters({ since: day, until: day }),
      project: (cwd) => setFilters({ cwd }),
      model: (model) => setFilters({ model }),
    },
  }).then(() => {
    if (mine.signal.aborted) return;
    box.removeAttribute('aria-busy');
    if (swap) replace(els.hits, hint, box);
    document.dispatchEvent(new CustomEvent('recall:home'));
  }).catch((e) => {
    if (e?.name === 'AbortError' || mine.signal.aborted) return;
    // A failed refresh keeps the page it had (the status line says why).
    if (swap) return;
    box.removeAttribute('aria-busy');
    replace(box, h('p', { class: 'error' }, `The session list cannot be shown: ${e.message}`), coverage ? coverageNode(coverage) : null);
  });
}

/** Changes some filters (as the user would) and reruns the view. */
function setFilters(fields) {
  writeFilters(els.form, { ...readForm(els.form), ...fields });
  schedule({ push: true });
}

/** Applies a view state (from the URL): filters, query, open session. */
function applyState(st) {
  restoring = true;
  try {
    writeFilters(els.form, st);
    els.q.value = st.q || '';
    const req = request();
    const key = JSON.stringify({ ...req, branch: readForm(els.form).branch || '' });
    if (key !== shownKey) {
      schedule();
      clearTimeout(timer);
      if (req.q.trim().length >= MIN_CHARS) runSearch(req);
    }
    const open = sessionView.current();
    if (!st.session) {
      if (open.key) sessionView.close();
    } else {
      let hit = null;
      if (st.hit) {
        const locator = decodeLocator(st.hit);
        if (locator) hit = { locator, ranges: rangesFromParam(st.hl) };
      }
      const same = open.key === st.session && (open.hit?.locator ? encodeLocator(open.hit.locator) : '') === (hit ? st.hit : '')
        && String(open.offset || '') === String(hit ? '' : (st.offset || ''));
      if (!same) sessionView.open(st.session, hit, hit ? undefined : Number(st.offset) || 0);
    }
  } finally {
    restoring = false;
  }
}

window.addEventListener('popstate', () => applyState(fromUrl()));

/**
 * Runs a search. `more` continues from the cursor. Each run aborts the one
 * in flight; an answer that arrives after a newer run started is dropped.
 */
async function runSearch(req, { more = false, retries = TIMEOUT_RETRIES, follow = 0 } = {}) {
  controller?.abort();
  const mine = new AbortController();
  controller = mine;
  const run = ++generation;
  const body = more && cursor ? { ...req, cursor } : req;
  els.results.setAttribute('aria-busy', 'true');
  if (!more) deepSearch.clear();
  if (!more && backend.sessions) {
    renderLane(els.lane, { api: backend, q: req.q, filters: listFilters(), signal: mine.signal, onOpen: (s) => openSession(s.session_key, null) })
      .catch(() => {
        els.lane.hidden = true;
      });
  } else if (!more) {
    els.lane.hidden = true;
  }
  let res;
  try {
    res = await backend.search(body, mine.signal);
  } catch (e) {
    if (e?.name === 'AbortError' || run !== generation) return;
    els.results.removeAttribute('aria-busy');
    if (e.code === 'cursor_expired' && more) {
      // The snapshot behind the cursor is gone: start again at page 1.
      runSearch(req);
      return;
    }
    replace(els.note, h('p', { class: 'error', role: 'alert' }, errorText(e, req.q)));
    if (!more) replace(els.hits);
    return;
  }
  if (run !== generation) return;
  els.results.removeAttribute('aria-busy');
  if (res.state === 'partial' && res.partial_reason === 'timeout' && retries > 0 && !more) {
    runSearch(req, { retries: retries - 1 });
    return;
  }
  lastRequest = req;
  cursor = res.cursor || null;
  coverage = res.coverage || coverage;
  render(res, more);
  // Nothing found yet but more to scan: continue by itself until a hit or the end.
  if (!res.sessions.length && res.cursor && follow < FOLLOW_EMPTY) {
    runSearch(req, { more: true, follow: follow + 1 });
    return;
  }
  live.shown(res, more);
  // For benchmarks and tests: when a page of results is on screen, and how
  // long after the last keystroke (the debounce included).
  document.dispatchEvent(new CustomEvent('recall:rendered', {
    detail: { q: req.q, more, sessions: res.sessions.length, ms: performance.now() - lastInputAt, backend: backend.kind },
  }));
}

function errorText(e, q = '') {
  if (e.code === 'network') return 'The recall daemon is not reachable. Start `recall serve`, or use the offline copy.';
  if (e.code === 'invalid_query' && Number.isInteger(e.at)) {
    // Where: the query up to the byte it points at, as characters.
    const bytes = new TextEncoder().encode(q);
    const col = new TextDecoder().decode(bytes.slice(0, e.at)).length;
    return `The query cannot be read at character ${col + 1}: ${e.message}.`;
  }
  return `Search failed: ${e.message}`;
}

function render(res, more) {
  // The branch filter is not a §4 field: message hits are narrowed here.
  const branch = readForm(els.form).branch || '';
  const sessions = branch ? res.sessions.filter((s) => s.branch === branch) : res.sessions;
  // Host names that collide are labelled with their ids: learn them all first.
  rememberHosts(res.hosts);
  const cards = sessions.map((s) => sessionCard(s, (session, hit) => openSession(session.session_key, hit)));
  const note = stateNote(res);
  noteHosts(els.form, res.hosts);
  replace(els.note, note ? h('p', { class: 'notice' }, note) : null, hostsNote(res));
  if (!more) replace(els.hits);
  else els.hits.querySelector('.more')?.remove();
  // The end with nothing found (on page 1, or after following empty pages).
  // Only the daemon reads source files: Deep Search for what the index leaves out.
  const deep = backend.kind === 'online' && lastRequest?.q?.trim() ? deepSearch.button(lastRequest) : null;
  els.hits.querySelector('.deep-btn')?.remove();
  if (!sessions.length && !res.cursor && !els.hits.querySelector('.session-card')) {
    append(els.hits, [h('p', { class: 'empty' }, 'No conversation matches.'), coverageNode(res.coverage), deep]);
    return;
  }
  append(els.hits, cards);
  if (res.cursor) {
    append(els.hits, [h('button', { type: 'button', class: 'more', onclick: () => runSearch(lastRequest, { more: true }) }, 'More results')]);
  }
  append(els.hits, [deep]);
}

function openSession(key, hit) {
  sessionView.open(key, hit);
}

// ---- keyboard: j/k between hits, Enter opens, Esc closes, ⌘K palette ----

function hits() {
  return [...els.results.querySelectorAll('.hit')];
}

function move(delta) {
  const list = hits();
  if (!list.length) return;
  const at = list.indexOf(document.activeElement);
  const next = at < 0 ? (delta > 0 ? 0 : list.length - 1) : Math.max(0, Math.min(list.length - 1, at + delta));
  list.forEach((el) => el.classList.remove('selected'));
  list[next].classList.add('selected');
  list[next].focus();
  list[next].scrollIntoView({ block: 'nearest' });
}

const palette = new Palette(els.palette, {
  search: (req, signal) => backend.search({ ...toRequest(readForm(els.form)), ...req }, signal),
  sessions: (q, signal) => (backend.sessions ? backend.sessions({ ...listFilters(), q, limit: 5 }, signal) : Promise.resolve(null)),
  open: (s, hit) => openSession(s.session_key, hit),
  commands: () => [
    { label: 'Focus the search box', run: () => els.q.focus() },
    { label: backend.kind === 'online' ? 'Go offline (download the index)' : 'Go back online', run: () => toggleOffline() },
    { label: 'Close the session panel', run: () => sessionView.close() },
  ],
});

document.addEventListener('keydown', (e) => {
  if ((e.metaKey || e.ctrlKey) && e.key.toLowerCase() === 'k') {
    e.preventDefault();
    palette.show();
    return;
  }
  const typing = e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.target instanceof HTMLTextAreaElement;
  if (e.key === 'Escape' && !els.session.hidden && !els.palette.open && !els.settings.open) {
    closeSession();
    return;
  }
  if (typing || e.metaKey || e.ctrlKey || e.altKey) return;
  if (e.key === 'j') move(1);
  else if (e.key === 'k') move(-1);
  else if (e.key === '/') {
    e.preventDefault();
    els.q.focus();
  }
});

els.q.addEventListener('keydown', (e) => {
  if (e.key === 'ArrowDown') {
    e.preventDefault();
    move(1);
  }
});

// ---- indexing status ----

let statusTimer = null;

async function pollStatus() {
  clearTimeout(statusTimer);
  let next = 15000;
  try {
    const s = await backend.status();
    if (backend.kind === 'online') {
      const first = lastStatus === null;
      lastStatus = s;
      els.demo.hidden = s.demo !== true;
      // The empty state needs the roots: redraw the home page once they are known.
      if (first && s.sessions === 0 && els.q.value.trim().length < MIN_CHARS) showIdle();
    }
    if (backend.kind === 'offline') {
      replace(els.status, `Offline copy: revision ${s.revision}, ${s.sessions} sessions, downloaded ${when(s.fetched_ms)}`);
    } else {
      showStatus(s);
      if (s.phase === 'indexing') next = 1500;
      if (s.coverage && !coverage) {
        coverage = s.coverage;
        if (els.q.value.trim().length < MIN_CHARS) showIdle({ refresh: true });
      }
    }
  } catch (e) {
    replace(els.status, h('span', { class: 'warn' }, backend.kind === 'online' ? 'Daemon unreachable' : e.message));
    next = 5000;
  }
  statusTimer = setTimeout(pollStatus, next);
}

function showStatus(s) {
  const total = Number(s.files_indexed || 0) + Number(s.files_due || 0);
  const parts = [];
  if (s.phase === 'indexing') {
    parts.push(h('span', {}, `Indexing ${s.files_indexed}/${total} files`));
    parts.push(h('progress', { max: total || 1, value: s.files_indexed || 0 }));
  } else if (s.phase === 'degraded') {
    parts.push(h('span', { class: 'warn' }, `Index degraded: ${s.files_failed} files failed${s.degraded_roots?.length ? `, unreadable: ${s.degraded_roots.map((r) => r.dir ?? r.message).join(', ')}` : ''}`));
  } else if (s.phase === 'current') {
    parts.push(h('span', {}, `Index current · revision ${s.revision}`));
  } else {
    parts.push(h('span', {}, s.enabled === false ? 'Serving a fixed index' : 'Waiting for the first sweep'));
  }
  // The history policy left sessions out: say so, with how to keep them.
  if (s.retired?.message) parts.push(h('span', { class: 'warn' }, ` · ${s.retired.message}`));
  replace(els.status, ...parts);
}

// ---- offline mode ----

async function toggleOffline() {
  if (backend.kind === 'offline') {
    setBackend(online);
    return;
  }
  els.offlineBtn.disabled = true;
  els.progress.hidden = false;
  const bar = els.progress.querySelector('progress');
  const label = els.progress.querySelector('span');
  try {
    await offlineStore.download(({ done, total, bytes }) => {
      bar.max = total || 1;
      bar.value = done;
      label.textContent = `Downloading the index: ${done}/${total} files, ${size(bytes)}`;
    });
    label.textContent = 'Loading the offline copy…';
    await offlineStore.open();
    setBackend(offlineStore.offline);
  } catch (e) {
    // No daemon but a copy already downloaded: use it.
    if (await offlineStore.stored()) {
      await offlineStore.open();
      setBackend(offlineStore.offline);
    } else {
      replace(els.note, h('p', { class: 'error', role: 'alert' }, `Offline download failed: ${e.message}`));
    }
  } finally {
    els.progress.hidden = true;
    els.offlineBtn.disabled = false;
  }
}

function setBackend(next) {
  backend = next;
  const off = next.kind === 'offline';
  els.modeBadge.hidden = !off;
  document.body.classList.toggle('is-offline', off);
  els.offlineBtn.textContent = off ? 'Go online' : 'Go offline';
  els.settingsBtn.hidden = off;
  if (off && els.settings.open) els.settings.close();
  localStorage.setItem('recall.mode', next.kind);
  live.setActive(!off);
  pollStatus();
  schedule();
}

els.offlineBtn.addEventListener('click', () => toggleOffline());
wireMenu(els.menuBtn, els.menu);
els.paletteBtn.addEventListener('click', () => palette.show());
const filterBar = new FilterBar(els.filtersBtn, els.chips, els.form, {
  read: () => readForm(els.form),
  clear: (key) => {
    const st = readForm(els.form);
    delete st[key];
    writeFilters(els.form, st);
    schedule({ push: true });
  },
});
new SettingsPane(els.settings, els.settingsBtn);
els.q.addEventListener('input', () => schedule({ typing: true }));
els.form.addEventListener('change', (e) => schedule({ push: !['cwd', 'branch', 'model'].includes(e.target.name) }));
els.form.addEventListener('input', (e) => {
  if (['cwd', 'branch', 'model'].includes(e.target.name)) schedule({ typing: true });
});
els.form.addEventListener('click', (e) => {
  const name = e.target?.dataset?.preset;
  if (!name) return;
  e.preventDefault();
  setFilters(preset(name));
});
els.form.addEventListener('submit', (e) => e.preventDefault());

// ---- start ----

async function start() {
  const st = fromUrl();
  writeFilters(els.form, st);
  els.q.value = st.q || '';
  if ('serviceWorker' in navigator && /^https?:$/.test(location.protocol)) {
    navigator.serviceWorker.register('/sw.js').catch(() => {});
  }
  const wantOffline = localStorage.getItem('recall.mode') === 'offline';
  let daemonUp = true;
  try {
    await online.status();
  } catch {
    daemonUp = false;
  }
  if ((wantOffline || !daemonUp) && (await offlineStore.stored())) {
    try {
      await offlineStore.open();
      setBackend(offlineStore.offline);
      restoreSession(st);
      return;
    } catch (e) {
      replace(els.note, h('p', { class: 'error' }, `The offline copy cannot be opened: ${e.message}`));
    }
  }
  setBackend(online);
  restoreSession(st);
}

/** Reopens the session (and located hit) a reloaded URL names. */
function restoreSession(st) {
  if (!st.session) return;
  restoring = true;
  try {
    const locator = st.hit ? decodeLocator(st.hit) : null;
    const hit = locator ? { locator, ranges: rangesFromParam(st.hl) } : null;
    sessionView.open(st.session, hit, hit ? undefined : Number(st.offset) || 0);
  } finally {
    restoring = false;
  }
}

start().finally(() => {
  document.documentElement.dataset.ready = 'true';
});
