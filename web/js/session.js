//! The session view: a page of entries (`GET /api/session/{key}`), jump to a
//! hit (`?locate=`) with the hit scrolled into view and highlighted, plain
//! words when the hit is stale or unavailable, lineage (`/trace`), a copy
//! button for the resume command, and user/assistant text rendered as
//! Markdown when a renderer is given (the dashboard passes `markdown.js`'s;
//! tool rows and the "raw" toggle show the original text). "Find in this
//! session" runs the core's one-session search (`sessionQuery` search) and
//! steps through its hits (marks on every hit, next/previous); "current
//! surface only" lists the core's active records (`filter` state=active at
//! the panel's scope). Both go through the backend, so they work online,
//! offline and in reports alike. Another host's session (team serve: the
//! answer's `host`) names that host in the header (`hosts.js`'s label).

import { h, replace } from './dom.js';
import { snippetNode, byteToIndex } from './highlight.js';
import { when, sessionBadges, recordBadges } from './format.js';
import { sessionActions } from './session-actions.js';
import { hostLabel } from './hosts.js';

const RAW_KEY = 'recall.raw';

/** Byte ranges into `text` as `[start, end)` string index ranges. */
export function indexRanges(text, ranges) {
  const flat = byteToIndex(text, (ranges || []).flat());
  const out = [];
  for (let i = 0; i + 1 < flat.length; i += 2) if (flat[i + 1] > flat[i]) out.push([flat[i], flat[i + 1]]);
  return out;
}

/** Entries per page. */
export const PAGE = 50;
/** Most find hits collected (pages of 100 through the search cursor). */
export const FIND_MAX = 500;

/** The roles a scope lists. */
function scopeRoles(scope) {
  return scope === 'all' ? ['user', 'assistant', 'tool'] : ['user', 'assistant'];
}

/** Normalizes a session page answer to `{session, offset, total, entries, locate, host}`. */
export function normalizePage(body) {
  const entries = body.entries || body.records || [];
  const offset = Number(body.offset ?? body.start ?? entries[0]?.index ?? 0);
  return {
    session: body.session || body.meta || {},
    offset,
    total: Number(body.total ?? body.total_entries ?? body.records_total ?? offset + entries.length),
    entries,
    locate: body.locate || null,
    host: body.host && body.host.id ? body.host : null,
  };
}

/** Base64url (no padding) of a locator's JSON, for `?locate=`. */
export function encodeLocator(loc) {
  const bytes = new TextEncoder().encode(JSON.stringify(loc));
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The locator in a `?hit=` value (base64url JSON), or null when it is not one. */
export function decodeLocator(text) {
  try {
    const b64 = String(text).replace(/-/g, '+').replace(/_/g, '/');
    const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
    const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
    const loc = JSON.parse(new TextDecoder().decode(bytes));
    return loc && typeof loc === 'object' && typeof loc.kind === 'string' ? loc : null;
  } catch {
    return null;
  }
}

/** The session panel. */
export class SessionView {
  /**
   * `root` is the panel element; `backend()` returns the current backend;
   * `onOpen(key)` opens another session (lineage links).
   */
  constructor(root, backend, onOpen, scope = () => 'conversation', { onChange = () => {}, markdown = null, back = () => false, tools = null } = {}) {
    this.root = root;
    this.scope = scope;
    this.backend = backend;
    this.onOpen = onOpen;
    this.onChange = onChange;
    /** `(text, ranges) → Element`, or null: text is shown as it is. */
    this.markdown = markdown;
    /** The Back/close button: `back()` returns true when it closed the panel itself (history back). */
    this.back = back;
    /** `(entry) → Element|null`: a tool row's card (`toolcards.js`), or null for the raw text. */
    this.toolCard = tools;
    /** The element that had focus when the panel opened (focus returns there on close). */
    this.opener = null;
    this.key = null;
    this.offset = undefined;
    this.controller = null;
    this.page = null;
    /** The find box: `{q, hits, at}` (hits in record order), or null. */
    this.find = null;
    /** Listing the current surface only (active records). */
    this.surface = false;
    try {
      this.raw = localStorage.getItem(RAW_KEY) === 'true';
    } catch {
      this.raw = false;
    }
  }

  /** What is open: `{key, hit, offset}` (`key` null when closed), for the URL. */
  current() {
    return { key: this.key, hit: this.hit || null, offset: this.offset };
  }

  /** Closes the panel. */
  close() {
    this.controller?.abort();
    const was = this.key;
    this.key = null;
    this.hit = null;
    this.offset = undefined;
    this.page = null;
    this.find = null;
    this.surface = false;
    this.root.hidden = true;
    const inside = this.root.contains(document.activeElement);
    replace(this.root);
    if (was) this.onChange(this.current());
    const opener = this.opener;
    this.opener = null;
    if (opener?.isConnected && (inside || document.activeElement === document.body || !document.activeElement)) opener.focus();
  }

  /** Shows the original text (`true`) or rendered Markdown. */
  setRaw(raw) {
    this.raw = raw;
    try {
      localStorage.setItem(RAW_KEY, String(raw));
    } catch {
      // private mode: the choice lasts for this page
    }
    if (this.page && this.key) this.render(this.key, this.page, { keepScroll: true });
  }

  /** Opens `key`, centred on `hit` (a search hit) when given. */
  async open(key, hit = null, offset = undefined) {
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    if (key !== this.key) {
      this.find = null;
      this.surface = false;
    }
    this.key = key;
    this.hit = hit;
    this.offset = hit?.locator ? undefined : offset;
    // Opened from outside the panel (a hit, a row, the palette): focus moves in, and back on close.
    const from = document.activeElement;
    const fromOutside = !this.root.contains(from);
    if (fromOutside && from && from !== document.body) this.opener = from;
    this.root.hidden = false;
    this.onChange(this.current());
    replace(this.root, h('p', { class: 'loading' }, 'Loading session…'));
    let page;
    try {
      page = this.surface
        ? await this.surfacePage(key, hit, offset, controller.signal)
        : normalizePage(await this.backend().session(key, this.pageParams(hit, offset), controller.signal));
    } catch (e) {
      if (e?.name === 'AbortError') return;
      replace(this.root, this.closeButton(), h('p', { class: 'error' }, `This session cannot be shown: ${e.message}`));
      return;
    }
    if (controller.signal.aborted) return;
    this.page = page;
    this.render(key, page);
    if (fromOutside) {
      const into = this.root.querySelector('.entry.target') || this.root.querySelector('.session-head h2');
      into?.focus({ preventScroll: true });
    }
    this.loadTrace(key, controller.signal);
  }

  pageParams(hit, offset) {
    const params = { limit: PAGE, scope: this.scope() };
    if (hit?.locator) params.locate = encodeLocator(hit.locator);
    else if (offset !== undefined) params.offset = offset;
    return params;
  }

  /**
   * A page of the current surface (the active records at the panel's scope),
   * shaped like a session page; centred on `hit.index` when given.
   */
  async surfacePage(key, hit, offset, signal) {
    const backend = this.backend();
    const filter = { state: 'active', roles: scopeRoles(this.scope()) };
    let start = Math.max(0, Number(offset) || 0);
    let target = -1;
    if (hit && hit.index !== undefined) {
      // Its place in the surface = the active records up to it.
      const upTo = await backend.sessionQuery(key, { query: 'filter', filter: { ...filter, to_index: hit.index }, limit: 1 }, signal);
      target = Math.max(0, Number(upTo.total) - 1);
      start = Math.max(0, target - Math.floor(PAGE / 2));
    }
    const res = await backend.sessionQuery(key, { query: 'filter', filter, offset: start, limit: PAGE }, signal);
    const entries = res.entries.map((e, i) => ({ ...e, index: start + i, total_index: e.index, superseded: e.state === 'superseded' }));
    const same = this.page?.session && this.page.session.session_key === key;
    const head = same ? this.page : normalizePage(await this.backend().session(key, { limit: 1 }, signal));
    const locate = target >= 0 ? { state: 'resolved', anchor: 'exact', entry_index: target - start } : null;
    return { session: head.session, offset: start, total: Number(res.total), entries, locate, host: head.host || res.host || null };
  }

  /** Turns "current surface only" on or off, keeping the find box's query. */
  setSurface(on) {
    this.surface = on;
    if (!this.key) return;
    // The find box searches what is listed: rerun it over the new listing.
    if (this.find?.q) this.runFind(this.find.q);
    else this.open(this.key, null, 0);
  }

  /** The `hit` a find hit opens: its locator (session view), index (surface) and ranges. */
  hitOf(found) {
    return { locator: found.locator, index: found.index, ranges: found.ranges };
  }

  /** Runs "find in this session" for `q` (empty clears it) and shows the first hit. */
  async runFind(q) {
    const key = this.key;
    q = (q || '').trim();
    if (!q) {
      this.find = null;
      if (this.page) this.render(key, this.page, { keepScroll: true });
      return;
    }
    const backend = this.backend();
    const filter = { roles: scopeRoles(this.scope()), ...(this.surface ? { state: 'active' } : {}) };
    const hits = [];
    let cursor;
    let error = null;
    try {
      do {
        const res = await backend.sessionQuery(key, { query: 'search', q, filter, limit: 100, ...(cursor ? { cursor } : {}) });
        hits.push(...res.hits);
        cursor = res.cursor;
      } while (cursor && hits.length < FIND_MAX);
    } catch (e) {
      error = e.message || String(e);
    }
    if (this.key !== key) return;
    this.find = { q, hits, at: hits.length ? 0 : -1, error };
    if (hits.length) await this.open(key, this.hitOf(hits[0]));
    else if (this.page) this.render(key, this.page, { keepScroll: true });
  }

  /** Moves to the next (`+1`) or previous (`-1`) find hit, wrapping around. */
  async step(dir) {
    const f = this.find;
    if (!f || !f.hits.length) return;
    f.at = (f.at + dir + f.hits.length) % f.hits.length;
    await this.open(this.key, this.hitOf(f.hits[f.at]));
  }

  /** The find box and the surface toggle. */
  tools() {
    const f = this.find;
    const input = h('input', { type: 'search', id: 'find-q', name: 'find', placeholder: 'Find in this session', value: f?.q || '', 'aria-label': 'Find in this session' });
    input.addEventListener('keydown', (ev) => {
      if (ev.key !== 'Enter') return;
      ev.preventDefault();
      if (f && f.q === input.value.trim() && f.hits.length) this.step(ev.shiftKey ? -1 : 1);
      else this.runFind(input.value);
    });
    const count = !f ? '' : f.error ? `Cannot search: ${f.error}` : f.hits.length ? `${f.at + 1} of ${f.hits.length}` : 'No matches';
    const none = !f || !f.hits.length;
    return h('div', { class: 'session-tools' },
      h('div', { class: 'find', role: 'search' },
        input,
        h('button', { type: 'button', class: 'find-prev', title: 'Previous (Shift-Enter)', disabled: none, onclick: () => this.step(-1) }, '↑'),
        h('button', { type: 'button', class: 'find-next', title: 'Next (Enter)', disabled: none, onclick: () => this.step(1) }, '↓'),
        h('span', { class: 'find-count', 'aria-live': 'polite' }, count)),
      h('label', { class: 'surface-toggle' },
        h('input', { type: 'checkbox', id: 'surface-only', checked: this.surface, onchange: (ev) => this.setSurface(ev.currentTarget.checked) }),
        ' current surface only'));
  }

  closeButton() {
    const close = () => {
      if (!this.back()) this.close();
    };
    return h('button', { class: 'close', type: 'button', title: 'Close (Esc)', 'aria-label': 'Back (close session)', onclick: close },
      h('span', { class: 'back-label' }, '← Back'), h('span', { class: 'close-x', 'aria-hidden': 'true' }, '×'));
  }

  /** An entry's text: Markdown for user and assistant, else the original text. */
  entryText(e, marks, prev = null) {
    const text = e.text ?? '';
    if (e.role === 'tool' && !this.raw && !marks && this.toolCard) {
      const card = this.toolCard(e, prev);
      if (card) return card;
    }
    if (this.raw || !this.markdown || e.role === 'tool') {
      const node = marks ? snippetNode(text, 0, marks, 'text raw') : h('div', { class: 'text raw' }, text);
      // A tool row scrolls (max-height): focusable, so a keyboard can scroll it.
      if (e.role === 'tool') node.tabIndex = 0;
      return node;
    }
    const node = this.markdown(text, marks ? indexRanges(text, marks) : []);
    node.classList.add('text');
    return node;
  }

  render(key, page, { keepScroll = false } = {}) {
    const scrolled = this.root.scrollTop;
    const s = page.session;
    const located = page.locate;
    let notice = null;
    if (located && located.state && located.state !== 'resolved') {
      const what = located.state === 'stale'
        ? 'This hit is stale: the transcript changed since it was indexed. The indexed copy is shown.'
        : 'This hit is unavailable: its transcript can no longer be read. The indexed copy is shown where there is one.';
      notice = h('p', { class: 'notice warn', role: 'alert' }, what, located.reason ? ` (${located.reason})` : '');
    } else if (located?.anchor === 'nearest') {
      notice = h('p', { class: 'notice' }, 'This hit is not listed in this view (a tool row, or the record moved); showing the nearest entry.');
    }
    const hitIndex = located?.entry_index ?? -1;
    const resolved = located?.state === 'resolved';
    const found = new Map((this.find?.hits || []).map((x) => [Number(x.index), x.ranges]));
    const current = this.find?.hits[this.find.at];
    const entries = page.entries.map((e, i) => {
      const index = Number(e.index ?? page.offset + i);
      const record = Number(e.total_index ?? index);
      // `entry_index` is the hit's place in this page's entries.
      const isHit = resolved && i === hitIndex;
      const isExact = isHit && located.anchor !== 'nearest';
      const marks = isExact && this.hit?.ranges ? this.hit.ranges : found.get(record) || null;
      const text = this.entryText(e, marks, page.entries[i - 1] || null);
      const findCls = found.has(record) ? ` find-hit${current && Number(current.index) === record ? ' find-current' : ''}` : '';
      const cls = `entry role-${e.role}${isHit ? ' located' : ''}${i === hitIndex ? ' target' : ''}${findCls}`;
      return h('article', { class: cls, tabIndex: i === hitIndex ? -1 : undefined, dataset: { index: String(index), record: String(record) } },
        h('header', {}, ...recordBadges(e), h('time', {}, when(e.ts_ms)), h('span', { class: 'index' }, `#${index + 1}`)),
        text);
    });
    const first = page.offset;
    const last = page.offset + page.entries.length;
    const what = this.surface ? 'Surface entries' : 'Entries';
    const pager = (where) => h('nav', { class: 'pager', 'aria-label': `Entries, ${where}` },
      h('button', { type: 'button', disabled: first <= 0, onclick: () => this.open(key, null, Math.max(0, first - PAGE)) }, '← Earlier'),
      h('span', {}, page.total ? `${what} ${first + 1}–${last} of ${page.total}` : 'No entries'),
      h('button', { type: 'button', disabled: last >= page.total, onclick: () => this.open(key, null, last) }, 'Later →'));
    const resume = s.resume
      ? h('div', { class: 'resume' },
        h('code', {}, s.resume),
        h('button', { type: 'button', class: 'copy', onclick: (ev) => copy(s.resume, ev.currentTarget) }, 'Copy'))
      : null;
    const host = page.host;
    const exportLink = this.backend().kind === 'online'
      ? sessionActions(key, { foreign: !!host, onForgotten: (k) => { this.close(); this.root.dispatchEvent(new CustomEvent('recall:forgotten', { bubbles: true, detail: { key: k } })); } })
      : null;
    replace(this.root,
      this.closeButton(),
      h('header', { class: 'session-head' },
        h('h2', { tabIndex: -1 }, s.title || s.session_id || key),
        h('div', { class: 'badges' }, ...sessionBadges({ source: s.source || key.split(':')[0], source_gone: s.source_gone })),
        h('div', { class: 'session-meta' },
          host ? h('span', { class: 'host', title: `host ${host.id}`, dataset: { host: host.id } }, `Host: ${hostLabel(host)}`) : null,
          h('span', { class: 'key' }, key),
          s.cwd ? h('span', { class: 'cwd' }, s.cwd) : null,
          s.branch ? h('span', { class: 'branch' }, s.branch) : null,
          s.updated_ms ? h('time', {}, when(s.updated_ms)) : null),
        resume, exportLink,
        this.markdown && h('label', { class: 'raw-toggle' },
          h('input', { type: 'checkbox', checked: this.raw, onchange: (ev) => this.setRaw(ev.currentTarget.checked) }),
          ' raw text'),
        h('div', { class: 'lineage', id: 'lineage' }),
        this.tools()),
      notice, pager('top'),
      h('div', { class: 'entries' }, ...entries),
      page.entries.length > 10 ? pager('bottom') : null);
    const target = this.root.querySelector('.entry.target');
    this.root.scrollTop = 0;
    if (keepScroll) {
      this.root.scrollTop = scrolled;
    } else if (target) {
      // Scroll the panel only (scrollIntoView would also move the page).
      const panel = this.root.getBoundingClientRect();
      const at = target.getBoundingClientRect();
      const head = this.root.querySelector('.session-head')?.offsetHeight || 0;
      this.root.scrollTop = Math.max(0, at.top - panel.top - head - 24);
    }
  }

  async loadTrace(key, signal) {
    let trace;
    try {
      trace = await this.backend().trace(key, signal);
    } catch {
      return;
    }
    const box = this.root.querySelector('#lineage');
    if (!box || this.key !== key) return;
    const link = (n) => n.missing
      ? h('span', { class: 'missing' }, `${n.session_key} (not indexed)`)
      : h('button', { type: 'button', class: 'link', onclick: () => this.onOpen(n.session_key) }, n.title || n.session_key);
    const tree = (nodes) => h('ul', {}, ...nodes.map((n) => h('li', {},
      n.parent?.relation ? h('span', { class: 'relation' }, n.parent.relation) : null, ' ', link(n),
      n.children?.length ? tree(n.children) : null)));
    const ancestors = trace.ancestors || [];
    const descendants = trace.descendants || [];
    if (!ancestors.length && !descendants.length) return;
    replace(box,
      ancestors.length ? h('div', {}, h('span', { class: 'label' }, 'Ancestors: '), ...ancestors.flatMap((a, i) => [i ? ' › ' : '', link(a)])) : null,
      descendants.length ? h('div', {}, h('span', { class: 'label' }, 'Descendants:'), tree(descendants)) : null);
  }
}

async function copy(text, button) {
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = 'Copied';
  } catch {
    const range = document.createRange();
    range.selectNodeContents(button.previousSibling);
    const sel = getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    button.textContent = 'Selected — press Ctrl-C';
  }
  setTimeout(() => { button.textContent = 'Copy'; }, 1500);
}
