//! The filter bar and the page URL. The form is read into a VIEW STATE (what
//! the URL holds: the query, filters with dates as `YYYY-MM-DD`, the open
//! session, the located hit and its highlight ranges), which `request()`
//! turns into §4 request fields (dates as local-day epoch ms). Every state
//! has a URL, so a view can be reloaded, shared, and walked with back/forward.
//! The host picker (team search) is filled from the `hosts` blocks of
//! answers (`noteHosts`) and stays hidden until an answer has one.

/** The source ids, in their canonical order. */
export const SOURCES = ['claude-code', 'codex', 'kimi', 'pi', 'intendant', 'dsh', 'gemini', 'copilot', 'qwen', 'opencode'];

/** URL keys of the filters, in URL order. */
const FILTER_KEYS = ['source', 'scope', 'role', 'since', 'until', 'cwd', 'branch', 'model', 'host', 'include_superseded', 'subagents', 'sort'];
/** URL keys of the open session. */
const SESSION_KEYS = ['session', 'hit', 'hl', 'offset'];

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** Local midnight of `YYYY-MM-DD` as epoch ms, or null. */
export function dayStart(day) {
  if (!DAY.test(day || '')) return null;
  const [y, m, d] = day.split('-').map(Number);
  const t = new Date(y, m - 1, d).getTime();
  return Number.isFinite(t) ? t : null;
}

/** `YYYY-MM-DD` of a Date in local time. */
export function dayOf(date) {
  const p = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())}`;
}

/** The since/until of a preset (`today`, `7d`, `30d`, `all`) relative to `now`. */
export function preset(name, now = new Date()) {
  const back = (days) => dayOf(new Date(now.getFullYear(), now.getMonth(), now.getDate() - days));
  switch (name) {
    case 'today': return { since: back(0), until: '' };
    case '7d': return { since: back(6), until: '' };
    case '30d': return { since: back(29), until: '' };
    default: return { since: '', until: '' };
  }
}

/** Reads the filter form into view-state fields (defaults left out). */
export function readForm(form) {
  const f = form.elements;
  const sources = SOURCES.filter((s) => f[`src-${s}`]?.checked);
  const st = {};
  if (sources.length && sources.length < SOURCES.length) st.source = sources.join(',');
  if (f.scope && f.scope.value !== 'conversation') st.scope = f.scope.value;
  if (f.role?.value) st.role = f.role.value;
  if (f.since?.value) st.since = f.since.value;
  if (f.until?.value) st.until = f.until.value;
  if (f.cwd?.value.trim()) st.cwd = f.cwd.value.trim();
  if (f.branch?.value.trim()) st.branch = f.branch.value.trim();
  if (f.model?.value.trim()) st.model = f.model.value.trim();
  if (f.host?.value) st.host = f.host.value;
  if (f.include_superseded && !f.include_superseded.checked) st.include_superseded = 'false';
  if (f.subagents && !f.subagents.checked) st.subagents = 'false';
  if (f.sort && f.sort.value !== 'newest') st.sort = f.sort.value;
  return st;
}

/** §4 request fields of view-state filters (dates → local-day epoch ms). */
export function request(st) {
  const req = {};
  for (const k of FILTER_KEYS) if (st[k]) req[k] = st[k];
  delete req.branch; // not a §4 field: the dashboard applies it itself
  const since = dayStart(st.since);
  const until = dayStart(st.until);
  if (st.since) req.since = since === null ? st.since : String(since);
  if (st.until) {
    // The whole of the `until` day.
    req.until = until === null ? st.until : String(new Date(until).setDate(new Date(until).getDate() + 1) - 1);
  }
  return req;
}

/** Reads the form into §4 request fields (the report viewer uses this). */
export function readFilters(form) {
  return request(readForm(form));
}

/** Sets the form from view-state fields (as read from the URL). */
export function writeFilters(form, st) {
  const f = form.elements;
  const sources = (st.source || '').split(',').filter(Boolean);
  for (const s of SOURCES) if (f[`src-${s}`]) f[`src-${s}`].checked = !sources.length || sources.includes(s);
  if (f.scope) f.scope.value = st.scope === 'all' ? 'all' : 'conversation';
  if (f.role) f.role.value = ['user', 'assistant', 'tool'].includes(st.role) ? st.role : '';
  if (f.since) f.since.value = DAY.test(st.since || '') ? st.since : '';
  if (f.until) f.until.value = DAY.test(st.until || '') ? st.until : '';
  if (f.cwd) f.cwd.value = st.cwd || '';
  if (f.branch) f.branch.value = st.branch || '';
  if (f.model) f.model.value = st.model || '';
  if (f.host) {
    // A host named by the URL before any answer listed it: an option with its id.
    if (st.host) {
      if (![...f.host.options].some((o) => o.value === st.host)) hostOption(f.host, st.host).textContent = st.host;
      (f.host.closest('[data-team]') || f.host).hidden = false;
    }
    f.host.value = st.host || '';
  }
  if (f.include_superseded) f.include_superseded.checked = st.include_superseded !== 'false';
  if (f.subagents) f.subagents.checked = st.subagents !== 'false';
  if (f.sort) f.sort.value = st.sort === 'relevance' ? 'relevance' : 'newest';
}

/** The `<option>` of host `id` in the picker `select`, added when missing. */
function hostOption(select, id) {
  let opt = [...select.options].find((o) => o.value === id);
  if (!opt) {
    opt = document.createElement('option');
    opt.value = id;
    select.append(opt);
  }
  return opt;
}

/**
 * Adds the hosts of a team answer's `hosts` block to the host picker (by id,
 * labelled with the name; an unavailable host is marked so) and shows the
 * picker. Hosts seen before stay: a filtered answer lists only its host.
 * An answer without `hosts` (a single store) changes nothing.
 */
export function noteHosts(form, hosts) {
  const select = form.elements.host;
  if (!select || !Array.isArray(hosts)) return;
  for (const x of hosts) {
    if (!x || !x.id) continue; // the bucket itself (listing failed) has no id
    const down = x.state !== 'available';
    const opt = hostOption(select, x.id);
    // An unreadable catalog has no name: keep the one an earlier answer gave.
    if (x.name) opt.dataset.name = x.name;
    opt.textContent = `${opt.dataset.name || x.id}${down ? ' (unavailable)' : ''}`;
    opt.title = down && x.reason ? x.reason : `host ${x.id}`;
  }
  // By name (the `all hosts` option first); the selection stays.
  const value = select.value;
  const [all, ...rest] = [...select.options];
  rest.sort((a, b) => a.textContent.localeCompare(b.textContent) || a.value.localeCompare(b.value));
  select.replaceChildren(all, ...rest);
  select.value = value;
  const wrap = select.closest('[data-team]') || select;
  wrap.hidden = false;
}

/** The view state in a URL's query string. */
export function fromUrl(search = location.search) {
  const params = new URLSearchParams(search);
  const st = {};
  for (const k of ['q', ...FILTER_KEYS, ...SESSION_KEYS]) if (params.has(k)) st[k] = params.get(k);
  return st;
}

/** The query string of a view state (`?…`, or '' for the empty state). */
export function urlOf(st) {
  const params = new URLSearchParams();
  for (const k of ['q', ...FILTER_KEYS, ...SESSION_KEYS]) if (st[k] !== undefined && st[k] !== null && st[k] !== '') params.set(k, st[k]);
  const s = params.toString();
  return s ? `?${s}` : '';
}

/**
 * Puts a view state into the page URL: `push` adds a history entry (a new
 * view: a session opened, a page turned), otherwise the current entry is
 * replaced (typing). Nothing happens when the URL would not change.
 */
export function toUrl(st, { push = false } = {}) {
  const next = urlOf(st) || location.pathname;
  const now = location.search || location.pathname;
  if (next === now) return;
  if (push) history.pushState(null, '', next);
  else history.replaceState(null, '', next);
}

/** `[[a,b],…]` as `a-b,…` (highlight byte ranges in the URL). */
export function rangesToParam(ranges) {
  return (ranges || []).map(([a, b]) => `${a | 0}-${b | 0}`).join(',');
}

/** The inverse of `rangesToParam`; bad pieces are dropped. */
export function rangesFromParam(text) {
  const out = [];
  for (const piece of String(text || '').split(',')) {
    const m = /^(\d+)-(\d+)$/.exec(piece.trim());
    if (m && Number(m[2]) > Number(m[1])) out.push([Number(m[1]), Number(m[2])]);
  }
  return out;
}
