//! The home page (no query): recent sessions newest first, paged; a project
//! picker (distinct cwds with counts), a model picker (distinct models with
//! counts, where the source records them); an activity chart of sessions and
//! messages per day and agent over the history window (a click on a day
//! filters to it); and, when nothing is indexed, where recall looked. Also
//! the metadata lane: sessions whose title, cwd or branch match the query,
//! listed above the message hits. All from `GET /api/sessions`.

import { h, replace, append } from './dom.js';
import { when, sessionBadges } from './format.js';
import { SOURCES } from './filters.js';

/** Sessions per home page. */
export const HOME_PAGE = 25;
/** Sessions in the metadata lane. */
export const LANE_LIMIT = 5;
/** Longest activity window drawn, in days (the most recent ones). */
export const MAX_DAYS = 120;

const SVG = 'http://www.w3.org/2000/svg';

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  for (const c of children) if (c) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

/** How to point recall at transcripts elsewhere, per source. */
const ENV = {
  'claude-code': 'CLAUDE_CONFIG_DIR',
  codex: 'CODEX_HOME',
  kimi: 'KIMI_CODE_HOME or KIMI_SHARE_DIR',
  pi: 'PI_CODING_AGENT_DIR',
  intendant: 'INTENDANT_HOME',
  dsh: 'DSH_HOME',
  gemini: 'GEMINI_CLI_HOME',
  copilot: 'COPILOT_HOME',
  qwen: 'QWEN_HOME',
  opencode: 'OPENCODE_DB or XDG_DATA_HOME',
};

/** One row of the recent-sessions list or the metadata lane. */
export function sessionRow(s, onOpen) {
  return h('li', { class: 'session-row', dataset: { key: s.session_key } },
    h('button', { type: 'button', class: 'title link', onclick: () => onOpen(s) }, s.title || s.session_id || s.session_key),
    ...sessionBadges(s),
    h('div', { class: 'session-meta' },
      s.cwd ? h('span', { class: 'cwd' }, s.cwd) : null,
      s.branch ? h('span', { class: 'branch' }, s.branch) : null,
      h('time', {}, when(s.updated_ms ?? s.created_ms)),
      h('span', { class: 'messages' }, `${s.messages ?? 0} ${s.messages === 1 ? 'message' : 'messages'}`)));
}

/** The empty state: each agent directory looked in, and how to use another. */
export function emptyState(status) {
  const roots = status?.roots || [];
  return h('div', { class: 'empty-state' },
    h('h2', {}, 'Nothing is indexed yet'),
    roots.length
      ? h('div', {},
        h('p', {}, 'recall looked for agent transcripts in:'),
        h('ul', { class: 'roots' }, ...roots.map((r) => h('li', { dataset: { source: r.source } },
          h('strong', {}, r.source), ' ', h('code', {}, r.dir), r.exists ? ' (exists, no sessions yet)' : ' (not found)'))))
      : null,
    h('p', {}, 'To index transcripts kept elsewhere, start recall with another home: ',
      h('code', {}, 'recall --home DIR serve'), ', or set the agent\'s own variable: ',
      ...Object.entries(ENV).flatMap(([src, v], i) => [i ? ', ' : '', h('code', {}, v), ` (${src})`]), '.'),
    h('p', {}, 'Sessions appear here as soon as an agent writes them.'));
}

/**
 * The activity chart: one column per day, bars stacked by agent — sessions
 * above, messages below. `onDay(day)` filters to a day.
 */
export function activityChart(activity, onDay, selected = '') {
  const byDay = new Map();
  for (const a of activity || []) {
    if (!byDay.has(a.day)) byDay.set(a.day, []);
    byDay.get(a.day).push(a);
  }
  if (!byDay.size) return null;
  const known = [...byDay.keys()].sort();
  // Every day of the window, quiet ones included.
  const days = [];
  const first = new Date(`${known[0]}T00:00:00`);
  const last = new Date(`${known[known.length - 1]}T00:00:00`);
  for (let d = new Date(last); d >= first && days.length < MAX_DAYS; d.setDate(d.getDate() - 1)) {
    const p = (n) => String(n).padStart(2, '0');
    days.unshift(`${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`);
  }
  const total = (day, field) => (byDay.get(day) || []).reduce((n, a) => n + a[field], 0);
  const maxS = Math.max(1, ...days.map((d) => total(d, 'sessions')));
  const maxM = Math.max(1, ...days.map((d) => total(d, 'messages')));
  const W = Math.max(8, Math.min(24, Math.floor(720 / days.length)));
  const H = 48;
  const width = days.length * W;
  // One tab stop: a slider over the days (arrow keys, Home/End; Enter or
  // Space filters to the day); the columns themselves take no focus.
  const labels = [];
  const chart = svg('svg', {
    class: 'activity-chart', viewBox: `0 0 ${width} ${2 * H + 6}`, width, height: 2 * H + 6,
    tabindex: 0, role: 'slider', 'aria-label': 'Activity per day: arrow keys pick a day, Enter filters to it',
    'aria-valuemin': 0, 'aria-valuemax': days.length - 1,
  });
  const columns = [];
  days.forEach((day, i) => {
    const rows = (byDay.get(day) || []).slice().sort((a, b) => SOURCES.indexOf(a.source) - SOURCES.indexOf(b.source));
    const label = rows.length
      ? `${day}: ${total(day, 'sessions')} sessions, ${total(day, 'messages')} messages — ${rows.map((r) => `${r.source} ${r.sessions}/${r.messages}`).join(', ')}`
      : `${day}: no sessions`;
    labels.push(label);
    const g = svg('g', { class: `day${day === selected ? ' selected' : ''}${rows.length ? ' busy' : ''}`, 'data-day': day, 'aria-label': label }, svg('title', {}, label));
    g.append(svg('rect', { class: 'hover', x: i * W, y: 0, width: W, height: 2 * H + 6 }));
    let top = H;
    let bottom = H + 6;
    for (const r of rows) {
      const hs = Math.max(1, Math.round((r.sessions / maxS) * (H - 2)));
      top -= hs;
      g.append(svg('rect', { class: `bar sessions source-${r.source}`, x: i * W + 1, y: top, width: W - 2, height: hs }));
      const hm = r.messages ? Math.max(1, Math.round((r.messages / maxM) * (H - 2))) : 0;
      if (hm) g.append(svg('rect', { class: `bar messages source-${r.source}`, x: i * W + 1, y: bottom, width: W - 2, height: hm }));
      bottom += hm;
    }
    if (rows.length) g.addEventListener('click', () => onDay(day));
    columns.push(g);
    chart.append(g);
  });
  // The day the slider stands on: the selected one, else the latest with sessions.
  let at = days.indexOf(selected);
  if (at < 0) at = Math.max(0, days.findLastIndex((d) => byDay.has(d)));
  const show = (i) => {
    at = Math.max(0, Math.min(days.length - 1, i));
    columns.forEach((g, j) => g.classList.toggle('current', j === at));
    chart.setAttribute('aria-valuenow', String(at));
    chart.setAttribute('aria-valuetext', labels[at]);
  };
  show(at);
  chart.addEventListener('keydown', (e) => {
    const step = { ArrowLeft: -1, ArrowDown: -1, ArrowRight: 1, ArrowUp: 1, PageDown: -7, PageUp: 7 }[e.key];
    if (step) show(at + step);
    else if (e.key === 'Home') show(0);
    else if (e.key === 'End') show(days.length - 1);
    else if ((e.key === 'Enter' || e.key === ' ') && byDay.has(days[at])) onDay(days[at]);
    else return;
    e.preventDefault();
  });
  const legend = h('div', { class: 'legend' },
    h('span', {}, `${days[0]} – ${days[days.length - 1]}`),
    h('span', {}, 'sessions ▲ · messages ▼ (a session counts on the day it was last updated)'),
    ...SOURCES.filter((s) => (activity || []).some((a) => a.source === s)).map((s) => h('span', { class: `swatch source-${s}` }, s)));
  return h('figure', { class: 'activity' }, h('figcaption', {}, 'Activity'), chart, legend);
}

/** The project picker: distinct cwds with counts; `onPick(cwd)`. */
export function projectPicker(projects, onPick, current = '') {
  if (!projects?.length) return null;
  return h('nav', { class: 'projects', 'aria-label': 'Projects' },
    h('h3', {}, 'Projects'),
    h('ul', {},
      current ? h('li', {}, h('button', { type: 'button', class: 'link', onclick: () => onPick('') }, 'all projects')) : null,
      ...projects.map((p) => h('li', { class: p.cwd === current ? 'current' : '' },
        h('button', { type: 'button', class: 'link project', dataset: { cwd: p.cwd }, onclick: () => onPick(p.cwd) }, p.cwd),
        h('span', { class: 'count' }, String(p.sessions))))));
}

/**
 * The model picker: distinct model names with session counts (only sources
 * that record the model count); `onPick(model)`.
 */
export function modelPicker(models, onPick, current = '') {
  if (!models?.length) return null;
  const cur = current.toLowerCase();
  return h('nav', { class: 'models', 'aria-label': 'Models' },
    h('h3', {}, 'Models'),
    h('ul', {},
      current ? h('li', {}, h('button', { type: 'button', class: 'link', onclick: () => onPick('') }, 'all models')) : null,
      ...models.map((m) => h('li', { class: m.model.toLowerCase() === cur ? 'current' : '' },
        h('button', { type: 'button', class: 'link model', dataset: { model: m.model }, onclick: () => onPick(m.model) }, m.model),
        h('span', { class: 'count' }, String(m.sessions))))));
}

/**
 * The home page into `box`. `api.sessions(params, signal)` lists sessions;
 * `filters` are the list filters; `on` has `open(s)`, `day(day)`, `project(cwd)`,
 * `model(name)`.
 */
export async function renderHome(box, { api, filters, status, selectedDay, signal, on }) {
  const tz = -new Date().getTimezoneOffset();
  const first = await api.sessions({ ...filters, limit: HOME_PAGE, facets: 'true', tz }, signal);
  if (signal?.aborted) return;
  if (!first.total && !Object.keys(filters).length && status && status.sessions === 0) {
    replace(box, emptyState(status));
    return;
  }
  const list = h('ol', { class: 'recent' });
  const more = h('button', { type: 'button', class: 'more-sessions' }, 'More sessions');
  let cursor = first.cursor;
  const add = (page) => {
    append(list, page.sessions.map((s) => sessionRow(s, on.open)));
    cursor = page.cursor;
    more.hidden = !cursor;
  };
  more.addEventListener('click', async () => {
    more.disabled = true;
    try {
      add(await api.sessions({ ...filters, limit: HOME_PAGE, cursor }));
    } finally {
      more.disabled = false;
    }
  });
  add(first);
  replace(box, h('div', { class: 'home' },
    h('div', { class: 'home-side' },
      activityChart(first.activity, on.day, selectedDay),
      projectPicker(first.projects, on.project, filters.cwd || ''),
      modelPicker(first.models, on.model, filters.model || '')),
    h('section', { class: 'home-main', 'aria-label': 'Recent sessions' },
      h('h2', {}, 'Recent sessions', h('span', { class: 'count' }, ` ${first.total}`)),
      first.total ? list : h('p', { class: 'empty' }, 'No session matches these filters.'),
      more)));
}

/** The metadata lane for query `q` into `box` (hidden when nothing matches). */
export async function renderLane(box, { api, q, filters, signal, onOpen }) {
  const res = await api.sessions({ ...filters, q, limit: LANE_LIMIT }, signal);
  if (signal?.aborted) return;
  if (!res.total) {
    box.hidden = true;
    replace(box);
    return;
  }
  box.hidden = false;
  replace(box,
    h('h3', {}, `Sessions whose title, folder or branch match (${res.total})`),
    h('ol', { class: 'lane-list' }, ...res.sessions.map((s) => sessionRow(s, onOpen))));
}
