//! The filter bar: turns the form into §4 request fields and back, and keeps
//! the query and filters in the page URL so a search can be reloaded or shared.

/** The source ids, in their canonical order. */
export const SOURCES = ['claude-code', 'codex', 'kimi', 'pi', 'intendant', 'dsh'];

/** Reads the form into request fields (defaults left out). */
export function readFilters(form) {
  const f = form.elements;
  const sources = SOURCES.filter((s) => f[`src-${s}`]?.checked);
  const req = {};
  if (sources.length && sources.length < SOURCES.length) req.source = sources.join(',');
  if (f.scope && f.scope.value !== 'conversation') req.scope = f.scope.value;
  if (f.role?.value) req.role = f.role.value;
  if (f.since?.value) req.since = `${f.since.value}T00:00:00`;
  if (f.cwd?.value.trim()) req.cwd = f.cwd.value.trim();
  if (f.include_superseded && !f.include_superseded.checked) req.include_superseded = 'false';
  if (f.subagents && !f.subagents.checked) req.subagents = 'false';
  if (f.sort && f.sort.value !== 'newest') req.sort = f.sort.value;
  return req;
}

/** Sets the form from request fields (as read from the URL). */
export function writeFilters(form, req) {
  const f = form.elements;
  const sources = (req.source || '').split(',').filter(Boolean);
  for (const s of SOURCES) f[`src-${s}`].checked = !sources.length || sources.includes(s);
  f.scope.value = req.scope === 'all' ? 'all' : 'conversation';
  f.role.value = ['user', 'assistant', 'tool'].includes(req.role) ? req.role : '';
  f.since.value = (req.since || '').slice(0, 10);
  f.cwd.value = req.cwd || '';
  f.include_superseded.checked = req.include_superseded !== 'false';
  f.subagents.checked = req.subagents !== 'false';
  f.sort.value = req.sort === 'relevance' ? 'relevance' : 'newest';
}

const KEYS = ['q', 'source', 'scope', 'role', 'since', 'cwd', 'include_superseded', 'subagents', 'sort'];

/** Request fields from the page URL. */
export function fromUrl(search = location.search) {
  const params = new URLSearchParams(search);
  const req = {};
  for (const k of KEYS) if (params.has(k)) req[k] = params.get(k);
  return req;
}

/** Puts request fields into the page URL (without a navigation). */
export function toUrl(req) {
  const params = new URLSearchParams();
  for (const k of KEYS) if (req[k]) params.set(k, req[k]);
  const s = params.toString();
  history.replaceState(null, '', s ? `?${s}` : location.pathname);
}
