//! Session views built from shards (generation files) in the page, for offline
//! mode and the report viewer: the same shapes the daemon's session routes
//! answer (`GET /api/session/{key}` and `/trace`), computed from the manifest
//! and the shard records instead of the store.

/** Entries per session page. */
export const PAGE = 50;

/** The summary of one session, like the daemon's session routes. */
export function sessionSummary(key, e) {
  return {
    session_key: key,
    source: e.source,
    session_id: e.session_id,
    title: e.title ?? null,
    cwd: e.cwd ?? null,
    branch: e.branch ?? null,
    created_ms: e.created_ms ?? null,
    updated_ms: e.updated_ms ?? null,
    messages: e.messages ?? null,
    records: e.records ?? null,
    parent: e.parent ?? null,
    resume: e.resume ?? null,
    source_gone: !!e.source_gone,
  };
}

/** A canonical string for a locator (key order does not matter). */
export function locatorKey(loc) {
  if (!loc || typeof loc !== 'object') return '';
  return JSON.stringify(Object.keys(loc).sort().map((k) => [k, loc[k]]));
}

/** Parses a `locate` value: a locator object, its JSON, or base64url JSON. */
export function parseLocate(locate) {
  if (!locate) return null;
  if (typeof locate === 'object') return locate;
  try {
    const s = locate.trim();
    if (s.startsWith('{')) return JSON.parse(s);
    const b64 = s.replace(/-/g, '+').replace(/_/g, '/');
    const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0))));
  } catch {
    return null;
  }
}

/**
 * One page of a shard's entries, like `GET /api/session/{key}`: tool rows
 * are listed only with `scope: 'all'`; `index` counts listed entries,
 * `total_index` all records. With `locate`, the page is centred on the
 * record carrying that locator (`locate.state` `resolved`; the nearest
 * listed entry before it when it is a hidden tool row), or says
 * `unavailable` when the shard holds no such record. Offline there is no
 * source to re-read, so a hit is never reported stale. `superseded` is the
 * set of superseded record indices (from the core), when known.
 */
export function pageEntries(shard, { offset, limit, locate, scope, superseded } = {}) {
  const records = shard.records || [];
  const all = scope === 'all';
  const visible = [];
  records.forEach((r, i) => {
    if (all || r.role !== 'tool') visible.push(i);
  });
  const size = Math.max(1, Math.min(500, Number(limit) || PAGE));
  let start = Math.min(visible.length, Math.max(0, Number(offset) || 0));
  let located = null;
  if (locate !== undefined && locate !== null && locate !== '') {
    const key = locatorKey(parseLocate(locate));
    const record = key ? records.findIndex((r) => locatorKey(r.locator) === key) : -1;
    if (record >= 0 && visible.length) {
      let n = visible.findIndex((i) => i >= record);
      const shown = n >= 0 && visible[n] === record;
      if (!shown) n = n < 0 ? visible.length - 1 : Math.max(0, n - 1);
      start = Math.max(0, Math.min(n - Math.floor(size / 2), visible.length - size));
      located = { state: 'resolved', anchor: shown ? 'exact' : 'nearest', entry_index: n, total_index: record };
    } else {
      located = { state: 'unavailable', reason: 'this record is not in the offline copy' };
    }
  }
  const entries = visible.slice(start, start + size).map((i, n) => {
    const r = records[i];
    return {
      index: start + n,
      total_index: i,
      role: r.role,
      ts_ms: r.ts_ms,
      seq: r.seq ?? null,
      ...(superseded ? { superseded: superseded.has(i) } : {}),
      truncated: !!r.truncated,
      subagent: !!r.subagent,
      text: r.text,
      locator: r.locator,
    };
  });
  return { scope: all ? 'all' : 'conversation', total: visible.length, offset: start, limit: size, entries, locate: located };
}

/** Lineage of `key` from the manifest: `{ok, session, ancestors, descendants}`. */
export function traceOf(manifest, key) {
  const sessions = manifest.sessions || {};
  if (!sessions[key]) return { ok: false, error: 'session_not_found', message: 'Unknown session.' };
  const ancestors = [];
  const seen = new Set([key]);
  let parent = sessions[key].parent;
  while (parent && !seen.has(parent.key) && ancestors.length < 64) {
    seen.add(parent.key);
    const e = sessions[parent.key];
    if (!e) {
      ancestors.push({ session_key: parent.key, missing: true });
      break;
    }
    ancestors.push(sessionSummary(parent.key, e));
    parent = e.parent;
  }
  ancestors.reverse();
  const kids = new Map();
  for (const [k, e] of Object.entries(sessions)) {
    if (e.parent && e.parent.key !== k) {
      if (!kids.has(e.parent.key)) kids.set(e.parent.key, []);
      kids.get(e.parent.key).push(k);
    }
  }
  for (const list of kids.values()) {
    list.sort((a, b) => (sessions[a].created_ms ?? Infinity) - (sessions[b].created_ms ?? Infinity) || (a < b ? -1 : 1));
  }
  const visited = new Set([key]);
  const tree = (k, depth) =>
    (kids.get(k) || []).filter((c) => !visited.has(c) && visited.add(c)).map((c) => ({
      ...sessionSummary(c, sessions[c]),
      children: depth < 63 ? tree(c, depth + 1) : [],
    }));
  return { ok: true, session: sessionSummary(key, sessions[key]), ancestors, descendants: tree(key, 0) };
}
