//! Small formatting helpers: times, byte sizes, badges.

import { h } from './dom.js';

/** `2026-11-29 21:28` in local time, or '' for a missing value. */
export function when(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(Number(ms))) return '';
  const d = new Date(Number(ms));
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** `2026-11-29` in local time. */
export function day(ms) {
  return when(ms).slice(0, 10);
}

/** `1.2 MB`. */
export function size(bytes) {
  const units = ['B', 'KB', 'MB', 'GB'];
  let n = Number(bytes) || 0;
  let u = 0;
  while (n >= 1000 && u < units.length - 1) {
    n /= 1000;
    u += 1;
  }
  return `${u ? n.toFixed(1) : n} ${units[u]}`;
}

/** A badge; `kind` picks its colour (`source`, `role`, `warn`, …). */
export function badge(text, kind = '', title = '') {
  return h('span', { class: `badge ${kind}`.trim(), title: title || undefined }, text);
}

/** The badges for one hit or entry. */
export function recordBadges(r) {
  return [
    r.role ? badge(r.role, `role role-${r.role}`) : null,
    r.superseded ? badge('superseded', 'warn', 'Rolled back, undone or on an abandoned branch') : null,
    r.subagent ? badge('subagent', 'info', 'Said inside a subagent of this session') : null,
    r.truncated ? badge('truncated', 'info', 'The text was cut at the size cap') : null,
  ];
}

/** The badges for one session. */
export function sessionBadges(s) {
  return [
    badge(s.source, `source source-${s.source}`),
    s.source_gone ? badge('source gone', 'warn', 'The transcript files no longer exist; the indexed copy remains') : null,
  ];
}
