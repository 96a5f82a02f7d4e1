//! Renders a search response: sessions grouped with their hits, highlighted
//! snippets, badges, the "more" button and, when nothing matches, what is
//! indexed (coverage). Team answers (`serve --remote`) also get the host of
//! each session and hit (named as `hosts.js` labels it) and a line for
//! every host that could not be read.
//! All transcript text (and every host name and reason) is set as text.

import { h } from './dom.js';
import { snippetNode } from './highlight.js';
import { when, day, sessionBadges, recordBadges, badge } from './format.js';
import { hostLabel } from './hosts.js';

/**
 * The host badge of a team answer's session or hit (none without `host`):
 * its name, with its id when another host has the same name (`hosts.js`).
 */
export function hostBadge(host) {
  if (!host || !host.id) return null;
  return badge(hostLabel(host), 'host', `host ${host.id}`);
}

/**
 * One session card. `onOpen(session, hit|null)` opens the session (at the
 * hit when given).
 */
export function sessionCard(s, onOpen) {
  const hits = (s.hits || []).map((hit, i) =>
    h('li', {
      class: 'hit',
      tabIndex: 0,
      dataset: { key: s.session_key, hit: String(i), ...(hit.host?.id ? { host: hit.host.id } : {}) },
      onclick: () => onOpen(s, hit),
      onkeydown: (e) => {
        if (e.key === 'Enter') onOpen(s, hit);
      },
    },
    h('div', { class: 'hit-meta' }, ...recordBadges(hit),
      hit.host && hit.host.id !== s.host?.id ? hostBadge(hit.host) : null, h('time', {}, when(hit.ts_ms))),
    snippetNode(hit.snippet, hit.snippet_offset_bytes, hit.ranges)),
  );
  const more = s.total_hits > hits.length ? h('div', { class: 'more-hits' }, `${s.total_hits - hits.length} more in this session`) : null;
  return h('article', { class: 'session-card', dataset: { key: s.session_key, ...(s.host?.id ? { host: s.host.id } : {}) } },
    h('header', {},
      h('button', { class: 'title link', type: 'button', onclick: () => onOpen(s, null) }, s.title || s.session_id),
      ...sessionBadges(s),
      hostBadge(s.host),
      h('span', { class: 'count' }, `${s.total_hits} ${s.total_hits === 1 ? 'hit' : 'hits'}`),
    ),
    h('div', { class: 'session-meta' },
      s.cwd ? h('span', { class: 'cwd' }, s.cwd) : null,
      s.branch ? h('span', { class: 'branch' }, s.branch) : null,
      h('time', {}, when(s.best_ts_ms)),
    ),
    h('ol', { class: 'hits' }, ...hits),
    more,
  );
}

/** The "what is indexed" lines shown when nothing matches. */
export function coverageNode(coverage) {
  const rows = Object.entries(coverage || {});
  if (!rows.length) return h('p', { class: 'coverage' }, 'Nothing is indexed yet.');
  return h('div', { class: 'coverage' },
    h('p', {}, 'Indexed:'),
    h('ul', {}, ...rows.map(([src, c]) =>
      h('li', {},
        h('strong', {}, src), ` — ${c.sessions} ${c.sessions === 1 ? 'session' : 'sessions'}`,
        c.oldest_ts_ms ? `, ${day(c.oldest_ts_ms)} to ${day(c.newest_ts_ms)}` : '',
        c.source_gone ? ` (${c.source_gone} with source files gone)` : '',
        ...(c.legacy || []).map((note) => h('div', { class: 'legacy' }, note)),
      ))),
  );
}

/** A status line for a response (`building`, `partial`). */
export function stateNote(res) {
  if (res.state === 'building') return 'The first indexing pass is still running: results so far.';
  if (res.state === 'partial' && res.partial_reason === 'timeout') return 'The search ran out of time; showing what was found.';
  if (res.state === 'partial' && res.partial_reason === 'hosts') return 'Some hosts could not be searched: showing the others.';
  if (res.state === 'partial') return 'Showing part of the results; load more to continue.';
  return '';
}

/**
 * Team answers: one line per host that could not be read (its name, or id,
 * and the reason), or null when every host answered or the answer is not a
 * team answer (no `hosts`).
 */
export function hostsNote(res) {
  const down = (res.hosts || []).filter((x) => x.state !== 'available');
  if (!down.length) return null;
  return h('ul', { class: 'hosts-down', role: 'status' }, ...down.map((x) =>
    h('li', { dataset: { host: x.id || '' } },
      h('strong', {}, x.name || x.id || 'the bucket'), ` is unavailable${x.reason ? `: ${x.reason}` : ''}`)));
}
