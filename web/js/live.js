//! Live updates from `GET /api/events` (server-sent events, one
//! `revision` event per published revision with the session keys it
//! changed): the open session appends the records indexed since it was
//! shown (the panel keeps the reader's scroll position unless they were at
//! the bottom, where it follows the new records), the caller refreshes the
//! home list and the status line, and a search on screen learns how many
//! new results a rerun would show ("N new results — refresh"). Offline
//! mode (and a browser without `EventSource`) never opens the stream.
//! Nothing of a transcript is rendered here: appended entries go through
//! the session view's own renderer.

import { h, replace } from './dom.js';

/** How long after a refused or broken stream it is opened again. */
const RETRY_MS = 15000;
/** The quiet time before a search is rerun to count what is new. */
const SEARCH_CHECK_MS = 800;

/** Whether `a` (a revision announcement) concerns session `key`. */
export function touches(a, key) {
  if (!key) return false;
  return a.reset || a.truncated || (a.changed || []).includes(key) || (a.removed || []).includes(key);
}

/**
 * How many more hits `fresh` (a search answer) holds than `shown` (session
 * key → total hits of the answer on screen): the sum of what each session
 * gained, new sessions counting whole.
 */
export function newResults(shown, fresh) {
  let n = 0;
  for (const s of fresh?.sessions || []) {
    const before = shown.get(s.session_key) || 0;
    n += Math.max(0, Number(s.total_hits || 0) - before);
  }
  return n;
}

/** Whether `el` (a scroll container) is scrolled to its end. */
function atBottom(el) {
  if (el.scrollHeight > el.clientHeight + 1) return el.scrollHeight - el.scrollTop - el.clientHeight < 40;
  const doc = document.scrollingElement || document.documentElement;
  return doc.scrollHeight - doc.scrollTop - innerHeight < 40;
}

function toBottom(el) {
  if (el.scrollHeight > el.clientHeight + 1) el.scrollTop = el.scrollHeight;
  else (document.scrollingElement || document.documentElement).scrollTop = 1e9;
}

/**
 * Brings the open session of `view` (a `SessionView`) up to date after an
 * announcement that touched it: the entries after the last one shown are
 * fetched and appended when the reader is on the last page; otherwise only
 * the total moves. The surface listing and a running "find" are left as
 * they are (their answers are ranked, not appended to).
 */
export async function appendNew(view) {
  const key = view.key;
  const page = view.page;
  if (!key || !page || view.surface || view.find) return false;
  const last = page.offset + page.entries.length;
  const onLast = last >= page.total;
  const bottom = atBottom(view.root);
  const res = await view.backend().session(key, { offset: last, limit: 50, scope: view.scope() });
  if (view.key !== key || view.page !== page) return false;
  const entries = res.entries || res.records || [];
  const total = Number(res.total ?? last + entries.length);
  if (total === page.total && !entries.length) return false;
  const next = {
    ...page,
    session: res.session || page.session,
    total,
    entries: onLast ? [...page.entries, ...entries] : page.entries,
  };
  view.page = next;
  view.render(key, next, { keepScroll: true });
  view.loadTrace(key);
  if (onLast && bottom) toBottom(view.root);
  view.root.dispatchEvent(new CustomEvent('recall:appended', { bubbles: true, detail: { key, added: entries.length } }));
  return true;
}

/** The event stream and what follows it. */
export class Live {
  /**
   * `view`: the session panel; `onRevision(a)`: every announcement (the
   * caller refreshes the home list and status); `search()`: the request
   * on screen or null; `run(req)`: reruns it for real; `backend()`: the
   * current backend; `note`: where "N new results" goes.
   */
  constructor({ view, onRevision = () => {}, search = () => null, run = () => {}, backend, note }) {
    this.view = view;
    this.onRevision = onRevision;
    this.search = search;
    this.run = run;
    this.backend = backend;
    this.note = note;
    this.source = null;
    this.active = false;
    this.retry = null;
    this.shownHits = new Map();
    this.checkTimer = null;
    this.checking = null;
    this.revision = null;
  }

  /** Opens (`true`) or closes the stream: online only. */
  setActive(on) {
    on = Boolean(on) && typeof EventSource === 'function';
    if (on === this.active) return;
    this.active = on;
    clearTimeout(this.retry);
    if (!on) {
      this.source?.close();
      this.source = null;
      this.clearNote();
      return;
    }
    this.connect();
  }

  connect() {
    if (!this.active) return;
    const es = new EventSource('/api/events');
    this.source = es;
    es.addEventListener('hello', (ev) => {
      const a = parse(ev.data);
      // Reconnected after missing revisions: catch up as after a reset.
      if (a && this.revision !== null && a.revision !== this.revision) this.announce({ ...a, reset: true });
      if (a) this.revision = a.revision;
    });
    es.addEventListener('revision', (ev) => {
      const a = parse(ev.data);
      if (a) this.announce(a);
    });
    es.onerror = () => {
      // A refused stream (429, 401) is closed for good by the browser:
      // open it again later. A dropped one reconnects by itself.
      if (es.readyState === EventSource.CLOSED && this.source === es) {
        this.source = null;
        this.retry = setTimeout(() => this.connect(), RETRY_MS);
      }
    };
  }

  announce(a) {
    if (!this.active) return;
    this.revision = a.revision;
    document.dispatchEvent(new CustomEvent('recall:revision', { detail: a }));
    if (touches(a, this.view.key)) {
      appendNew(this.view).catch(() => {});
    }
    this.onRevision(a);
    if (this.search()) this.scheduleCheck();
  }

  /** The first page of a search answer is on screen (`more` = a later page). */
  shown(res, more) {
    if (!more) {
      this.shownHits = new Map();
      this.clearNote();
    }
    for (const s of res.sessions || []) this.shownHits.set(s.session_key, Number(s.total_hits || 0));
  }

  scheduleCheck() {
    clearTimeout(this.checkTimer);
    this.checkTimer = setTimeout(() => this.check(), SEARCH_CHECK_MS);
  }

  /** Reruns the search on screen quietly and says how much is new. */
  async check() {
    const req = this.search();
    if (!req || !this.active) return;
    this.checking?.abort();
    const mine = new AbortController();
    this.checking = mine;
    let fresh;
    try {
      fresh = await this.backend().search(req, mine.signal);
    } catch {
      return;
    }
    if (this.checking !== mine || this.search() !== req) return;
    const n = newResults(this.shownHits, fresh);
    if (!n) return;
    replace(this.note, h('button', { type: 'button', class: 'live-new', onclick: () => { this.clearNote(); this.run(req); } },
      `${n} new ${n === 1 ? 'result' : 'results'} — refresh`));
    this.note.hidden = false;
  }

  clearNote() {
    clearTimeout(this.checkTimer);
    this.checking?.abort();
    this.checking = null;
    if (this.note) {
      replace(this.note);
      this.note.hidden = true;
    }
  }
}

function parse(text) {
  try {
    const a = JSON.parse(text);
    return a && typeof a === 'object' ? a : null;
  } catch {
    return null;
  }
}
