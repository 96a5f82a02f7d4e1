//! The settings pane (online only): the store policy (indexing enabled,
//! days of history kept), "clear index" behind a confirmation, and the live
//! index status. A history change is previewed first (`POST
//! /api/index/policy?dry_run=true` says how many indexed sessions it would
//! retire) and applied only by "Apply". State changes are POSTs with the
//! `X-Recall-Action` header the server requires. Status is polled only while
//! the pane is visible and an indexing phase is observed (Orca's rule).

import { h, replace } from './dom.js';
import { getJson, url, ApiError } from './api.js';
import { when } from './format.js';

const POLL_MS = 1000;
const PREVIEW_DEBOUNCE_MS = 250;

/** A state-changing POST (query-string parameters, no body). */
async function post(path, params = {}) {
  let res;
  try {
    res = await fetch(url(path, params), {
      method: 'POST',
      headers: { 'X-Recall-Action': 'settings', Accept: 'application/json' },
    });
  } catch {
    throw new ApiError(0, 'network', 'The recall daemon cannot be reached.');
  }
  const body = await res.json().catch(() => null);
  if (!res.ok || !body || body.ok === false) {
    throw new ApiError(res.status, body?.error || `http_${res.status}`, body?.message || res.statusText);
  }
  return body;
}

function statusText(s) {
  if (s.phase === 'indexing' || s.building) {
    const total = Number(s.files_indexed || 0) + Number(s.files_due || 0);
    return `Indexing: ${s.files_indexed || 0}/${total} files`;
  }
  const parts = [`${s.phase === 'degraded' ? 'Degraded' : s.phase === 'current' ? 'Current' : 'Idle'}`,
    `${s.sessions} sessions`, `revision ${s.revision}`];
  if (s.last_reconcile_ms) parts.push(`reconciled ${when(s.last_reconcile_ms)}`);
  if (s.availability?.state === 'unavailable') parts.push(`unavailable: ${s.availability.reason}`);
  return parts.join(' · ');
}

/** The pane, built into `dialog` and opened by `button`. */
export class SettingsPane {
  constructor(dialog, button) {
    this.dialog = dialog;
    this.button = button;
    this.timer = null;
    this.previewTimer = null;
    this.previewSeq = 0;
    this.policy = null;
    this.build();
    button.addEventListener('click', () => this.open());
    dialog.addEventListener('close', () => this.stopPolling());
    document.addEventListener('visibilitychange', () => {
      if (this.visible()) this.refresh();
      else this.stopPolling();
    });
  }

  build() {
    this.enabled = h('input', { type: 'checkbox', name: 'enabled', onchange: () => this.setEnabled() });
    this.days = h('input', { type: 'number', name: 'history_days', min: '0', step: '1', inputmode: 'numeric',
      oninput: () => this.schedulePreview() });
    this.preview = h('p', { class: 'settings-preview', role: 'status' });
    this.apply = h('button', { type: 'button', name: 'apply', disabled: true, onclick: () => this.applyDays() }, 'Apply');
    this.status = h('p', { class: 'settings-status', role: 'status' });
    this.message = h('p', { class: 'settings-message', role: 'alert' });
    this.clearBtn = h('button', { type: 'button', name: 'clear', onclick: () => this.askClear() }, 'Clear index…');
    this.confirm = h('div', { class: 'settings-confirm', hidden: true },
      h('p', {}, 'Delete the index and rebuild it from the transcripts? Transcripts are never touched; open searches and links to result pages restart.'),
      h('button', { type: 'button', name: 'confirm-clear', onclick: () => this.clear() }, 'Clear the index'),
      ' ',
      h('button', { type: 'button', name: 'cancel-clear', onclick: () => { this.confirm.hidden = true; } }, 'Cancel'));
    replace(this.dialog,
      h('header', {}, h('h2', {}, 'Index settings'),
        h('button', { type: 'button', name: 'close', 'aria-label': 'Close', onclick: () => this.dialog.close() }, '×')),
      h('label', {}, this.enabled, ' Indexing enabled'),
      h('label', {}, 'Days of history kept (0 = everything) ', this.days, ' ', this.apply),
      this.preview,
      h('h3', {}, 'Status'),
      this.status,
      this.clearBtn,
      this.confirm,
      this.message);
  }

  visible() {
    return this.dialog.open && document.visibilityState === 'visible';
  }

  async open() {
    replace(this.message);
    replace(this.preview);
    this.confirm.hidden = true;
    this.apply.disabled = true;
    if (!this.dialog.open) this.dialog.showModal();
    await this.refresh({ fillForm: true });
  }

  stopPolling() {
    clearTimeout(this.timer);
    this.timer = null;
  }

  /** Reads the status once; keeps polling while visible and indexing. */
  async refresh({ fillForm = false } = {}) {
    this.stopPolling();
    let s;
    try {
      s = await getJson('/api/index/status');
    } catch (e) {
      replace(this.status, h('span', { class: 'warn' }, e.message));
      return;
    }
    this.dialog.dataset.phase = s.building ? 'indexing' : s.phase;
    replace(this.status, statusText(s));
    if (s.policy) {
      this.policy = s.policy;
      this.enabled.checked = s.policy.enabled;
      if (fillForm) this.days.value = String(s.policy.history_days);
    }
    if (this.visible() && (s.phase === 'indexing' || s.building)) {
      this.timer = setTimeout(() => this.refresh(), POLL_MS);
    }
  }

  schedulePreview() {
    clearTimeout(this.previewTimer);
    this.apply.disabled = true;
    this.previewTimer = setTimeout(() => this.showPreview(), PREVIEW_DEBOUNCE_MS);
  }

  daysValue() {
    const raw = this.days.value.trim();
    return /^\d+$/.test(raw) ? Number(raw) : null;
  }

  /** What the new window would retire, before anything changes. */
  async showPreview() {
    const days = this.daysValue();
    if (days === null) {
      replace(this.preview, h('span', { class: 'warn' }, 'A whole number of days, 0 for everything.'));
      return;
    }
    const seq = ++this.previewSeq;
    try {
      const r = await post('/api/index/policy', { history_days: days, dry_run: true });
      if (seq !== this.previewSeq) return;
      this.dialog.dataset.retires = String(r.retires);
      replace(this.preview, r.retires > 0
        ? `${r.retires} indexed session${r.retires === 1 ? ' is' : 's are'} older than ${days} days and would be retired at the next sweep.`
        : days === 0 ? 'Every session is kept.' : `No indexed session is older than ${days} days.`);
      this.apply.disabled = days === this.policy?.history_days;
    } catch (e) {
      if (seq === this.previewSeq) replace(this.preview, h('span', { class: 'warn' }, e.message));
    }
  }

  async applyDays() {
    const days = this.daysValue();
    if (days === null) return;
    this.apply.disabled = true;
    try {
      const r = await post('/api/index/policy', { history_days: days });
      this.policy = r.policy;
      replace(this.message, `Saved: ${r.policy.history_days} days of history${r.retires ? `; ${r.retires} sessions retire at the next sweep` : ''}.`);
    } catch (e) {
      replace(this.message, h('span', { class: 'warn' }, e.message));
    }
    await this.refresh();
  }

  async setEnabled() {
    const enabled = this.enabled.checked;
    try {
      const r = await post('/api/index/policy', { enabled });
      this.policy = r.policy;
      replace(this.message, enabled ? 'Indexing enabled.' : 'Indexing disabled: the index stays searchable as it is.');
    } catch (e) {
      this.enabled.checked = !enabled;
      replace(this.message, h('span', { class: 'warn' }, e.message));
    }
    await this.refresh();
  }

  askClear() {
    this.confirm.hidden = false;
  }

  async clear() {
    this.confirm.hidden = true;
    try {
      await post('/api/index/clear');
      replace(this.message, 'Index cleared; rebuilding from the transcripts.');
    } catch (e) {
      replace(this.message, h('span', { class: 'warn' }, e.message));
    }
    await this.refresh();
  }
}
