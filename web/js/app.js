//! The dashboard: search as you type (from 2 characters, 225 ms debounce,
//! in-flight requests aborted and stale answers dropped), filters, paging by
//! cursor (restart on 410), indexing status, the session panel, the palette,
//! j/k navigation and offline mode.

import { byId, h, replace, append } from './dom.js';
import { online } from './api.js';
import * as offlineStore from './offline.js';
import { sessionCard, coverageNode, stateNote } from './results.js';
import { SessionView } from './session.js';
import { Palette } from './palette.js';
import { readFilters, writeFilters, fromUrl, toUrl } from './filters.js';
import { size, when } from './format.js';

const DEBOUNCE_MS = 225;
const MIN_CHARS = 2;
const TIMEOUT_RETRIES = 4;

const els = {
  q: byId('q'),
  form: byId('filters'),
  results: byId('results'),
  note: byId('note'),
  status: byId('index-status'),
  session: byId('session'),
  modeBadge: byId('mode-badge'),
  offlineBtn: byId('offline-btn'),
  progress: byId('download'),
  palette: byId('palette'),
};

let backend = online;
let timer = null;
let controller = null;
let generation = 0;
let lastRequest = null;
let cursor = null;
let coverage = null;
let lastInputAt = 0;

const sessionView = new SessionView(els.session, () => backend, (key) => openSession(key, null), () => readFilters(els.form).scope || 'conversation');

function request() {
  return { q: els.q.value, ...readFilters(els.form) };
}

/** Schedules a search after the debounce; shorter input clears the results. */
function schedule() {
  lastInputAt = performance.now();
  clearTimeout(timer);
  const req = request();
  toUrl(req);
  if (req.q.trim().length < MIN_CHARS) {
    controller?.abort();
    generation += 1;
    showIdle();
    return;
  }
  timer = setTimeout(() => runSearch(req), DEBOUNCE_MS);
}

function showIdle() {
  replace(els.note);
  replace(els.results, h('p', { class: 'hint' }, `Type at least ${MIN_CHARS} characters to search every conversation.`),
    coverage ? coverageNode(coverage) : null);
}

/**
 * Runs a search. `more` continues from the cursor. Each run aborts the one
 * in flight; an answer that arrives after a newer run started is dropped.
 */
async function runSearch(req, { more = false, retries = TIMEOUT_RETRIES } = {}) {
  controller?.abort();
  const mine = new AbortController();
  controller = mine;
  const run = ++generation;
  const body = more && cursor ? { ...req, cursor } : req;
  els.results.setAttribute('aria-busy', 'true');
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
    replace(els.note, h('p', { class: 'error', role: 'alert' }, errorText(e)));
    if (!more) replace(els.results);
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
  // For benchmarks and tests: when a page of results is on screen, and how
  // long after the last keystroke (the debounce included).
  document.dispatchEvent(new CustomEvent('recall:rendered', {
    detail: { q: req.q, more, sessions: res.sessions.length, ms: performance.now() - lastInputAt, backend: backend.kind },
  }));
}

function errorText(e) {
  if (e.code === 'network') return 'The recall daemon is not reachable. Start `recall serve`, or use the offline copy.';
  return `Search failed: ${e.message}`;
}

function render(res, more) {
  const cards = res.sessions.map((s) => sessionCard(s, (session, hit) => openSession(session.session_key, hit)));
  const note = stateNote(res);
  replace(els.note, note ? h('p', { class: 'notice' }, note) : null);
  if (!more) {
    replace(els.results);
    if (!res.sessions.length) {
      append(els.results, [h('p', { class: 'empty' }, 'No conversation matches.'), coverageNode(res.coverage)]);
      return;
    }
  } else {
    els.results.querySelector('.more')?.remove();
  }
  append(els.results, cards);
  if (res.cursor) {
    append(els.results, [h('button', { type: 'button', class: 'more', onclick: () => runSearch(lastRequest, { more: true }) }, 'More results')]);
  }
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
  search: (req, signal) => backend.search({ ...readFilters(els.form), ...req }, signal),
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
  if (e.key === 'Escape' && !els.session.hidden && !els.palette.open) {
    sessionView.close();
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
    if (backend.kind === 'offline') {
      replace(els.status, `Offline copy: revision ${s.revision}, ${s.sessions} sessions, downloaded ${when(s.fetched_ms)}`);
    } else {
      showStatus(s);
      if (s.phase === 'indexing') next = 1500;
      if (s.coverage && !coverage) {
        coverage = s.coverage;
        if (els.q.value.trim().length < MIN_CHARS) showIdle();
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
    parts.push(h('span', { class: 'warn' }, `Index degraded: ${s.files_failed} files failed${s.degraded_roots?.length ? `, unreadable: ${s.degraded_roots.join(', ')}` : ''}`));
  } else if (s.phase === 'current') {
    parts.push(h('span', {}, `Index current · revision ${s.revision}`));
  } else {
    parts.push(h('span', {}, s.enabled === false ? 'Serving a fixed index' : 'Waiting for the first sweep'));
  }
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
  localStorage.setItem('recall.mode', next.kind);
  pollStatus();
  schedule();
}

els.offlineBtn.addEventListener('click', () => toggleOffline());
els.q.addEventListener('input', schedule);
els.form.addEventListener('change', schedule);
els.form.addEventListener('input', (e) => {
  if (e.target.name === 'cwd') schedule();
});
els.form.addEventListener('submit', (e) => e.preventDefault());

// ---- start ----

async function start() {
  const req = fromUrl();
  writeFilters(els.form, req);
  els.q.value = req.q || '';
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
      return;
    } catch (e) {
      replace(els.note, h('p', { class: 'error' }, `The offline copy cannot be opened: ${e.message}`));
    }
  }
  setBackend(online);
}

start().finally(() => {
  document.documentElement.dataset.ready = 'true';
});
