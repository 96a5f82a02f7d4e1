//! The daemon's HTTP API (DESIGN.md §7) as the dashboard uses it: JSON GETs
//! with abort signals, the §7 error body turned into an `ApiError`, and a
//! bounded retry when the server answers 429 `busy`.

/** An error answer of the API (`{ok:false, error, message}`) or the network. */
export class ApiError extends Error {
  constructor(status, code, message, at) {
    super(message || code);
    this.name = 'ApiError';
    /** HTTP status, 0 for a network failure. */
    this.status = status;
    /** The §7 code (`invalid_param`, `cursor_expired`, `busy`, …) or `network`. */
    this.code = code;
    /** For `invalid_query`: the byte offset in `q` the error points at. */
    if (Number.isInteger(at)) this.at = at;
  }
}

const RETRIES_ON_BUSY = 6;

/** Builds `path?k=v&…`, skipping empty values. */
export function url(path, params = {}) {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') continue;
    qs.set(k, String(v));
  }
  const s = qs.toString();
  return s ? `${path}?${s}` : path;
}

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(signal.reason ?? new DOMException('aborted', 'AbortError'));
    }, { once: true });
  });
}

/**
 * GETs JSON. Throws `ApiError` for error bodies and network failures and
 * rethrows `AbortError` untouched. Retries 429 `busy` with backoff.
 */
export async function getJson(path, params = {}, { signal } = {}) {
  for (let attempt = 0; ; attempt += 1) {
    let res;
    try {
      res = await fetch(url(path, params), { signal, headers: { Accept: 'application/json' } });
    } catch (e) {
      if (e?.name === 'AbortError') throw e;
      throw new ApiError(0, 'network', 'The recall daemon cannot be reached.');
    }
    if (res.status === 429 && attempt < RETRIES_ON_BUSY) {
      await sleep(150 * 2 ** attempt, signal);
      continue;
    }
    let body = null;
    try {
      body = await res.json();
    } catch (e) {
      if (e?.name === 'AbortError') throw e;
    }
    if (!res.ok || !body || body.ok === false) {
      throw new ApiError(res.status, body?.error || `http_${res.status}`, body?.message || res.statusText, body?.at);
    }
    return body;
  }
}

/** The online backend: everything goes to the daemon. */
export const online = {
  kind: 'online',
  /** §4 message search. */
  search(request, signal) {
    return getJson('/api/sessions/message-search', request, { signal });
  },
  /** A page of one session's entries, optionally centred on a locator. */
  session(key, { offset, limit, locate, scope } = {}, signal) {
    return getJson(`/api/session/${encodeURIComponent(key)}`, { offset, limit, locate, scope }, { signal });
  },
  /** `GET /api/sessions`: list/filter sessions (`q` matches title, cwd, branch; `facets`). */
  sessions(params, signal) {
    return getJson('/api/sessions', params, { signal });
  },
  /**
   * A one-session query (the core's JSON request: `{query: 'search', q, filter, cursor, limit}`,
   * `{query: 'filter', filter, offset, limit}`, …) as `GET /api/session/{key}/<query>`.
   */
  sessionQuery(key, request, signal) {
    const route = String(request.query).replace(/_/g, '-');
    return getJson(`/api/session/${encodeURIComponent(key)}/${route}`, routeParams(request), { signal });
  },
  /** Ancestors and descendants of a session. */
  trace(key, signal) {
    return getJson(`/api/session/${encodeURIComponent(key)}/trace`, {}, { signal });
  },
  /** The indexer's status. */
  status(signal) {
    return getJson('/api/index/status', {}, { signal });
  },
};

/** The query parameters of a one-session route for a core request object. */
export function routeParams(request) {
  const { query: _query, filter = {}, at, ...rest } = request || {};
  const names = { from_index: 'from', to_index: 'to', since_ms: 'since', until_ms: 'until', roles: 'role' };
  const out = {};
  for (const [k, v] of Object.entries(filter)) {
    if (v === undefined || v === null) continue;
    out[names[k] || k] = Array.isArray(v) ? v.join(',') : String(v);
  }
  for (const [k, v] of Object.entries(rest)) if (v !== undefined && v !== null) out[k] = String(v);
  if (at && at.index !== undefined) out.index = String(at.index);
  if (at && at.locator) out.locator = JSON.stringify(at.locator);
  return out;
}
