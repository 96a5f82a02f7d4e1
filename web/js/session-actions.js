//! The session panel's actions (online only): an Export menu — Markdown
//! (with or without subagents and tool rows), JSON, the source files as a
//! ZIP, the HTML report (`recall report`'s page, with or without the
//! subagents) — and "Forget this session" with an inline confirmation (no
//! browser dialog): `POST /api/session/{key}/forget` with the
//! `X-Recall-Action` header the state-changing routes require. After a
//! forget the panel closes and `onForgotten(key)` refreshes what is shown.
//! Another host's session (team serve) gets only what the daemon serves
//! from that host's published shards: no source files, no forget.

import { h, replace } from './dom.js';

/**
 * The export links of session `key` (URL-encoded into the paths);
 * `foreign` = another host's session (no source files).
 */
export function exportLinks(key, { foreign = false } = {}) {
  const k = encodeURIComponent(key);
  return [
    ['Markdown', `/api/session/${k}/export.md`],
    ['Markdown with subagents and tool rows', `/api/session/${k}/export.md?subagents=true&tools=true`],
    ['JSON', `/api/session/${k}/export.json`],
    foreign ? null : ['Source files (zip)', `/api/session/${k}/export`],
    ['HTML report', `/api/session/${k}/report.html`],
    ['HTML report with subagents', `/api/session/${k}/report.html?subagents=true`],
  ].filter(Boolean);
}

/** Forgets `key`; resolves to the answer, throws with the server's message. */
export async function forget(key) {
  const res = await fetch(`/api/session/${encodeURIComponent(key)}/forget`, {
    method: 'POST',
    headers: { 'X-Recall-Action': 'forget', Accept: 'application/json' },
  });
  let body = null;
  try {
    body = await res.json();
  } catch {
    // not JSON: reported by status below
  }
  if (!res.ok || !body?.ok) throw new Error(body?.message || `HTTP ${res.status}`);
  return body;
}

/** The actions row for session `key` (`foreign`: another host's). */
export function sessionActions(key, { onForgotten = () => {}, foreign = false } = {}) {
  const menu = h('details', { class: 'export-menu' },
    h('summary', {}, 'Export'),
    h('ul', {}, ...exportLinks(key, { foreign }).map(([label, href]) => h('li', {}, h('a', { href, download: '' }, label)))));
  if (foreign) return h('div', { class: 'session-actions' }, menu);
  const box = h('div', { class: 'forget-box' });
  const ask = () => {
    const status = h('span', { class: 'forget-status', role: 'status' });
    const yes = h('button', { type: 'button', class: 'forget-confirm danger' }, 'Forget');
    const no = h('button', { type: 'button', class: 'forget-cancel' }, 'Cancel');
    no.addEventListener('click', () => idle());
    yes.addEventListener('click', async () => {
      yes.disabled = true;
      no.disabled = true;
      try {
        await forget(key);
        onForgotten(key);
      } catch (e) {
        status.textContent = `Could not forget it: ${e.message}`;
        no.disabled = false;
      }
    });
    replace(box,
      h('span', { class: 'forget-question' }, 'Forget this session? It leaves the index until its transcript changes; the transcript itself is kept.'),
      ' ', yes, ' ', no, ' ', status);
    no.focus();
  };
  const idle = () => replace(box, h('button', { type: 'button', class: 'forget' }, 'Forget this session'));
  idle();
  box.addEventListener('click', (ev) => {
    if (ev.target?.classList?.contains('forget')) ask();
  });
  return h('div', { class: 'session-actions' }, menu, box);
}
