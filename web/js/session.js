//! The session view: a page of entries (`GET /api/session/{key}`), jump to a
//! hit (`?locate=`) with the hit scrolled into view and highlighted, plain
//! words when the hit is stale or unavailable, lineage (`/trace`) and a copy
//! button for the resume command.

import { h, replace } from './dom.js';
import { snippetNode } from './highlight.js';
import { when, sessionBadges, recordBadges } from './format.js';

/** Entries per page. */
export const PAGE = 50;

/** Normalizes a session page answer to `{session, offset, total, entries, locate}`. */
export function normalizePage(body) {
  const entries = body.entries || body.records || [];
  const offset = Number(body.offset ?? body.start ?? entries[0]?.index ?? 0);
  return {
    session: body.session || body.meta || {},
    offset,
    total: Number(body.total ?? body.total_entries ?? body.records_total ?? offset + entries.length),
    entries,
    locate: body.locate || null,
  };
}

/** Base64url (no padding) of a locator's JSON, for `?locate=`. */
export function encodeLocator(loc) {
  const bytes = new TextEncoder().encode(JSON.stringify(loc));
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The session panel. */
export class SessionView {
  /**
   * `root` is the panel element; `backend()` returns the current backend;
   * `onOpen(key)` opens another session (lineage links).
   */
  constructor(root, backend, onOpen, scope = () => 'conversation') {
    this.root = root;
    this.scope = scope;
    this.backend = backend;
    this.onOpen = onOpen;
    this.key = null;
    this.controller = null;
  }

  /** Closes the panel. */
  close() {
    this.controller?.abort();
    this.key = null;
    this.root.hidden = true;
    replace(this.root);
  }

  /** Opens `key`, centred on `hit` (a search hit) when given. */
  async open(key, hit = null, offset = undefined) {
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    this.key = key;
    this.hit = hit;
    this.root.hidden = false;
    replace(this.root, h('p', { class: 'loading' }, 'Loading session…'));
    const params = { limit: PAGE, scope: this.scope() };
    if (hit?.locator) params.locate = encodeLocator(hit.locator);
    else if (offset !== undefined) params.offset = offset;
    let page;
    try {
      page = normalizePage(await this.backend().session(key, params, controller.signal));
    } catch (e) {
      if (e?.name === 'AbortError') return;
      replace(this.root, this.closeButton(), h('p', { class: 'error' }, `This session cannot be shown: ${e.message}`));
      return;
    }
    if (controller.signal.aborted) return;
    this.render(key, page);
    this.loadTrace(key, controller.signal);
  }

  closeButton() {
    return h('button', { class: 'close', type: 'button', title: 'Close (Esc)', 'aria-label': 'Close session', onclick: () => this.close() }, '×');
  }

  render(key, page) {
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
    const entries = page.entries.map((e, i) => {
      const index = Number(e.index ?? page.offset + i);
      const isHit = resolved && index === hitIndex;
      const isExact = isHit && located.anchor !== 'nearest';
      const text = isExact && this.hit?.ranges ? snippetNode(e.text ?? '', 0, this.hit.ranges, 'text') : h('div', { class: 'text' }, e.text ?? '');
      const cls = `entry role-${e.role}${isHit ? ' located' : ''}${index === hitIndex ? ' target' : ''}`;
      return h('article', { class: cls, dataset: { index: String(index) } },
        h('header', {}, ...recordBadges(e), h('time', {}, when(e.ts_ms)), h('span', { class: 'index' }, `#${index + 1}`)),
        text);
    });
    const first = page.offset;
    const last = page.offset + page.entries.length;
    const pager = () => h('nav', { class: 'pager' },
      h('button', { type: 'button', disabled: first <= 0, onclick: () => this.open(key, null, Math.max(0, first - PAGE)) }, '← Earlier'),
      h('span', {}, page.total ? `Entries ${first + 1}–${last} of ${page.total}` : 'No entries'),
      h('button', { type: 'button', disabled: last >= page.total, onclick: () => this.open(key, null, last) }, 'Later →'));
    const resume = s.resume
      ? h('div', { class: 'resume' },
        h('code', {}, s.resume),
        h('button', { type: 'button', class: 'copy', onclick: (ev) => copy(s.resume, ev.currentTarget) }, 'Copy'))
      : null;
    const exportLink = this.backend().kind === 'online'
      ? h('a', { href: `/api/session/${encodeURIComponent(key)}/export`, download: '' }, 'Download source files (zip)')
      : null;
    replace(this.root,
      this.closeButton(),
      h('header', { class: 'session-head' },
        h('h2', {}, s.title || s.session_id || key),
        h('div', { class: 'badges' }, ...sessionBadges({ source: s.source || key.split(':')[0], source_gone: s.source_gone })),
        h('div', { class: 'session-meta' },
          h('span', { class: 'key' }, key),
          s.cwd ? h('span', { class: 'cwd' }, s.cwd) : null,
          s.branch ? h('span', { class: 'branch' }, s.branch) : null,
          s.updated_ms ? h('time', {}, when(s.updated_ms)) : null),
        resume, exportLink,
        h('div', { class: 'lineage', id: 'lineage' })),
      notice, pager(),
      h('div', { class: 'entries' }, ...entries),
      page.entries.length > 10 ? pager() : null);
    const target = this.root.querySelector('.entry.target');
    this.root.scrollTop = 0;
    if (target) {
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
