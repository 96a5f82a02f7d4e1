//! The narrow-screen chrome (a phone, from 360 px): the header menu
//! (Offline, Settings, Palette behind one button), the "Filters" button that
//! shows and hides the filter form, and the chips naming the active filters
//! (a tap on one clears it). On a wide screen the menu and the form are
//! always shown and the button and chips are hidden by the stylesheet; this
//! module only keeps their state. Whether the page is narrow is one media
//! query, shared with the session panel (full screen on a phone).

import { h, replace } from './dom.js';

/** The width below which the dashboard uses its phone layout (matches app.css). */
export const NARROW = '(max-width: 720px)';

/** True when the phone layout is in effect. */
export function narrow() {
  return typeof matchMedia === 'function' && matchMedia(NARROW).matches;
}

/** The label of one active filter (a view-state field), for its chip. */
export function chipLabel(key, value) {
  switch (key) {
    case 'source': return `Source: ${value.split(',').join(', ')}`;
    case 'scope': return 'Scope: all';
    case 'role': return `Role: ${value}`;
    case 'since': return `Since ${value}`;
    case 'until': return `Until ${value}`;
    case 'cwd': return `Folder: ${value}`;
    case 'branch': return `Branch: ${value}`;
    case 'model': return `Model: ${value}`;
    case 'host': return `Host: ${value}`;
    case 'include_superseded': return 'No superseded';
    case 'subagents': return 'No subagents';
    case 'sort': return `Sort: ${value}`;
    default: return `${key}: ${value}`;
  }
}

/**
 * Wires the header menu: `button` toggles `menu` (a popup on a phone); Escape
 * or a tap outside closes it, and choosing an item closes it.
 */
export function wireMenu(button, menu) {
  const set = (open) => {
    button.setAttribute('aria-expanded', String(open));
    menu.classList.toggle('open', open);
  };
  button.addEventListener('click', () => {
    const open = button.getAttribute('aria-expanded') !== 'true';
    set(open);
    if (open) menu.querySelector('button:not([hidden])')?.focus();
  });
  menu.addEventListener('click', (e) => {
    if (e.target.closest('button')) set(false);
  });
  menu.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && menu.classList.contains('open')) {
      e.stopPropagation();
      set(false);
      button.focus();
    }
  });
  document.addEventListener('click', (e) => {
    if (!menu.contains(e.target) && !button.contains(e.target)) set(false);
  });
  return { close: () => set(false) };
}

/**
 * The "Filters" button and the chips. `read()` returns the active filters
 * (view-state fields, defaults left out); `clear(key)` resets one.
 */
export class FilterBar {
  constructor(button, chips, form, { read, clear }) {
    this.button = button;
    this.chips = chips;
    this.form = form;
    this.read = read;
    this.clear = clear;
    button.addEventListener('click', () => this.setOpen(!document.body.classList.contains('filters-open')));
    this.update();
  }

  setOpen(open) {
    document.body.classList.toggle('filters-open', open);
    this.button.setAttribute('aria-expanded', String(open));
    if (open) this.form.querySelector('input, select')?.focus();
  }

  /** Redraws the chips and the count on the button. */
  update() {
    const active = Object.entries(this.read());
    this.button.textContent = active.length ? `Filters (${active.length})` : 'Filters';
    replace(this.chips, ...active.map(([k, v]) => h('button', {
      type: 'button',
      class: 'chip',
      dataset: { filter: k },
      'aria-label': `Remove filter ${chipLabel(k, v)}`,
      onclick: () => this.clear(k),
    }, chipLabel(k, v), h('span', { 'aria-hidden': 'true' }, ' ×'))));
  }
}
