//! The command palette (⌘K / Ctrl-K): a quick search that jumps straight to a
//! session — sessions whose title, folder or branch match, then message hits
//! (superseded text left out) — plus a few commands. Arrow keys move, Enter
//! opens, Esc closes.

import { h, replace } from './dom.js';
import { snippetNode } from './highlight.js';

const DEBOUNCE_MS = 150;

/**
 * The palette. `search(req, signal)` returns a §4 response; `sessions(q,
 * signal)` a `/api/sessions` page or null; `open(s, hit)` opens.
 */
export class Palette {
  constructor(dialog, { search, sessions = async () => null, open, commands }) {
    this.dialog = dialog;
    this.search = search;
    this.sessions = sessions;
    this.openHit = open;
    this.commands = commands;
    this.input = h('input', { type: 'text', placeholder: 'Jump to a conversation…', 'aria-label': 'Palette search', autocomplete: 'off', spellcheck: false });
    this.list = h('ul', { class: 'palette-list', role: 'listbox' });
    replace(dialog, this.input, this.list);
    this.items = [];
    this.active = 0;
    this.input.addEventListener('input', () => this.schedule());
    this.input.addEventListener('keydown', (e) => this.key(e));
    dialog.addEventListener('close', () => this.controller?.abort());
    dialog.addEventListener('click', (e) => {
      if (e.target === dialog) dialog.close();
    });
  }

  /** Opens the palette with an empty query. */
  show() {
    if (!this.dialog.open) this.dialog.showModal();
    this.input.value = '';
    this.fill(this.commands().map((c) => ({ label: c.label, hint: 'command', run: c.run })));
    this.input.focus();
  }

  schedule() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.run(), DEBOUNCE_MS);
  }

  async run() {
    const q = this.input.value.trim();
    const commands = this.commands()
      .filter((c) => c.label.toLowerCase().includes(q.toLowerCase()))
      .map((c) => ({ label: c.label, hint: 'command', run: c.run }));
    if (q.length < 2) {
      this.fill(commands);
      return;
    }
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    try {
      // Like Intendant's palette: only what still stands (no rolled-back text).
      const [meta, res] = await Promise.all([
        this.sessions(q, controller.signal).catch(() => null),
        this.search({ q, limit: 10, include_superseded: 'false' }, controller.signal),
      ]);
      if (controller.signal.aborted) return;
      const titled = (meta?.sessions || []).map((s) => ({
        label: s.title || s.session_key,
        hint: `${s.source} · session`,
        kind: 'session',
        run: () => this.openHit(s, null),
      }));
      const items = res.sessions.map((s) => ({
        label: s.title || s.session_key,
        hint: s.source,
        kind: 'message',
        snippet: s.hits[0],
        run: () => this.openHit(s, s.hits[0] || null),
      }));
      this.fill([...items, ...titled, ...commands]);
    } catch (e) {
      if (e?.name !== 'AbortError') this.fill([{ label: e.message, hint: 'error', run: () => {} }, ...commands]);
    }
  }

  fill(items) {
    this.items = items;
    this.active = 0;
    replace(this.list, ...items.map((item, i) => h('li', {
      role: 'option',
      class: `${i === 0 ? 'active' : ''} ${item.kind || 'command'}`.trim(),
      onclick: () => this.choose(i),
    },
    h('span', { class: 'label' }, item.label),
    h('span', { class: 'hint' }, item.hint),
    item.snippet ? snippetNode(item.snippet.snippet, item.snippet.snippet_offset_bytes, item.snippet.ranges) : null)));
  }

  key(e) {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      const n = this.items.length;
      if (!n) return;
      this.active = (this.active + (e.key === 'ArrowDown' ? 1 : n - 1)) % n;
      [...this.list.children].forEach((li, i) => li.classList.toggle('active', i === this.active));
      this.list.children[this.active]?.scrollIntoView({ block: 'nearest' });
    } else if (e.key === 'Enter') {
      e.preventDefault();
      this.choose(this.active);
    }
  }

  choose(i) {
    const item = this.items[i];
    if (!item) return;
    this.dialog.close();
    item.run();
  }
}
