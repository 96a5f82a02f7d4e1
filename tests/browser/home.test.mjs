// The home page (recent sessions, projects, activity), the metadata lane,
// date presets and the until/branch filters, deep links with back/forward and
// reload, and the issue-16 regressions: the online session panel keeps
// `scope`, and the palette's message section leaves superseded text out.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDir, makeHome, serve, warm, launch, openPage, cleanup } from './lib/env.mjs';
import { assertNotBlank } from './lib/shots.mjs';

let dir;
let server;
let browser;

before(async () => {
  dir = tempDir();
  const home = makeHome(dir, { sessions: 40 });
  server = await serve(home);
  await warm(server.url);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  cleanup(dir);
});

async function api(path, params = {}) {
  const qs = new URLSearchParams(params).toString();
  return (await fetch(`${server.url}${path}${qs ? `?${qs}` : ''}`)).json();
}

async function homeReady(page) {
  await page.waitForSelector('.home-box:not([aria-busy])');
}

async function waitResults(page) {
  await page.waitForFunction(() => {
    const r = document.getElementById('results');
    return r.getAttribute('aria-busy') !== 'true' && r.querySelector('.session-card, .empty');
  });
}

const rowKeys = (page) => page.$$eval('.recent .session-row', (rows) => rows.map((r) => r.dataset.key));

test('the home page lists recent sessions newest first, paged, with their metadata', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  await homeReady(page);
  const expected = await api('/api/sessions', { limit: 25 });
  assert.ok(expected.total > 25, 'more than one page');
  assert.deepEqual(await rowKeys(page), expected.sessions.map((s) => s.session_key));
  const first = expected.sessions[0];
  const row = await page.$(`.session-row[data-key="${first.session_key}"]`);
  const text = await row.textContent();
  assert.ok(text.includes(first.source), 'source badge');
  assert.ok(text.includes(first.title || first.session_id));
  if (first.cwd) assert.ok(text.includes(first.cwd));
  assert.ok(text.includes(`${first.messages} message`));
  await assertNotBlank(page, 'the home page');
  await page.click('.more-sessions');
  await page.waitForFunction((n) => document.querySelectorAll('.recent .session-row').length > n, 25);
  const next = await api('/api/sessions', { limit: 25, cursor: expected.cursor });
  assert.deepEqual(await rowKeys(page), [...expected.sessions, ...next.sessions].map((s) => s.session_key));
  // A row opens its session.
  await page.click(`.session-row[data-key="${first.session_key}"] .title`);
  await page.waitForSelector('#session .entry');
  assert.equal(await page.textContent('#session .session-meta .key'), first.session_key);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the project picker lists distinct folders with counts and filters to one', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  await homeReady(page);
  const facets = await api('/api/sessions', { facets: 'true', limit: 1 });
  const shown = await page.$$eval('.projects li', (l) => l.map((li) => [li.querySelector('.project').dataset.cwd, Number(li.querySelector('.count').textContent)]));
  assert.deepEqual(shown, facets.projects.map((p) => [p.cwd, p.sessions]));
  const pick = facets.projects[0];
  await page.click(`.projects .project[data-cwd="${pick.cwd}"]`);
  await page.waitForFunction((cwd) => new URL(location.href).searchParams.get('cwd') === cwd, pick.cwd);
  await homeReady(page);
  await page.waitForFunction((n) => document.querySelector('.home-main h2 .count')?.textContent.trim() === String(n), pick.sessions);
  const cwds = await page.$$eval('.recent .session-row .cwd', (l) => l.map((e) => e.textContent));
  assert.ok(cwds.length > 0);
  for (const c of cwds) assert.ok(c === pick.cwd || c.startsWith(`${pick.cwd}/`), c);
  assert.equal(await page.inputValue('input[name="cwd"]'), pick.cwd);
  await page.close();
});

test('the activity chart shows sessions and messages per day and agent; a click filters to the day', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  await homeReady(page);
  const tz = await page.evaluate(() => -new Date().getTimezoneOffset());
  const facets = await api('/api/sessions', { facets: 'true', limit: 1, tz });
  const busiest = [...facets.activity].sort((a, b) => b.sessions - a.sessions)[0];
  const day = await page.$(`.activity-chart .day[data-day="${busiest.day}"]`);
  assert.ok(day, `a column for ${busiest.day}`);
  assert.ok((await day.$$('rect.bar.sessions')).length > 0);
  assert.ok((await day.$$('rect.bar.messages')).length > 0);
  const label = await day.getAttribute('aria-label');
  const sessions = facets.activity.filter((a) => a.day === busiest.day).reduce((n, a) => n + a.sessions, 0);
  assert.match(label, new RegExp(`^${busiest.day}: ${sessions} sessions`));
  await day.click();
  await page.waitForFunction((d) => {
    const p = new URL(location.href).searchParams;
    return p.get('since') === d && p.get('until') === d;
  }, busiest.day);
  await homeReady(page);
  const since = await page.evaluate((d) => new Date(`${d}T00:00:00`).getTime(), busiest.day);
  const until = await page.evaluate((d) => { const t = new Date(`${d}T00:00:00`); t.setDate(t.getDate() + 1); return t.getTime() - 1; }, busiest.day);
  const expected = await api('/api/sessions', { since, until, limit: 25 });
  assert.ok(expected.total >= sessions);
  assert.deepEqual(await rowKeys(page), expected.sessions.map((s) => s.session_key));
  assert.ok(await page.$(`.activity-chart .day.selected[data-day="${busiest.day}"]`), 'the day is marked');
  await page.close();
});

test('date presets and the until filter narrow the search; a branch filter narrows the list', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  await homeReady(page);
  await page.click('.presets button[data-preset="7d"]');
  const weekAgo = await page.evaluate(() => {
    const d = new Date();
    d.setDate(d.getDate() - 6);
    const p = (n) => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
  });
  const since = await page.inputValue('input[name="since"]');
  assert.equal(since, weekAgo, 'the last 7 days, today included');
  assert.equal(new URL(page.url()).searchParams.get('since'), since);
  await page.click('.presets button[data-preset="all"]');
  assert.equal(await page.inputValue('input[name="since"]'), '');
  assert.equal(new URL(page.url()).searchParams.get('since'), null);
  // until: the search only has hits up to the end of that day.
  const all = await api('/api/sessions', { limit: 500 });
  const times = all.sessions.map((s) => s.created_ms).filter(Boolean).sort((a, b) => a - b);
  const mid = new Date(times[Math.floor(times.length / 2)]);
  const p = (n) => String(n).padStart(2, '0');
  const untilDay = `${mid.getFullYear()}-${p(mid.getMonth() + 1)}-${p(mid.getDate())}`;
  await page.fill('input[name="until"]', untilDay);
  await page.dispatchEvent('input[name="until"]', 'change');
  await page.fill('#q', 'the');
  await waitResults(page);
  const end = await page.evaluate((d) => { const t = new Date(`${d}T00:00:00`); t.setDate(t.getDate() + 1); return t.getTime() - 1; }, untilDay);
  const hitTimes = await page.$$eval('.session-card', (cards) => cards.length);
  assert.ok(hitTimes > 0);
  const expected = await api('/api/sessions/message-search', { q: 'the', until: end });
  assert.deepEqual(await page.$$eval('.session-card', (c) => c.map((x) => x.dataset.key)), expected.sessions.map((s) => s.session_key));
  for (const s of expected.sessions) for (const h of s.hits) assert.ok(h.ts_ms <= end);
  // branch: the home list narrows to sessions on it.
  const branch = all.sessions.find((s) => s.branch)?.branch;
  assert.ok(branch, 'the corpus records branches');
  await page.fill('#q', '');
  await page.fill('input[name="until"]', '');
  await page.dispatchEvent('input[name="until"]', 'change');
  await page.fill('input[name="branch"]', branch);
  await page.waitForFunction((b) => new URL(location.href).searchParams.get('branch') === b, branch);
  await homeReady(page);
  const onBranch = await api('/api/sessions', { branch, limit: 25 });
  await page.waitForFunction((n) => document.querySelector('.home-main h2 .count')?.textContent.trim() === String(n), onBranch.total);
  const branches = await page.$$eval('.recent .session-row .branch', (l) => l.map((e) => e.textContent));
  assert.ok(branches.length > 0);
  for (const b of branches) assert.equal(b, branch);
  await page.close();
});

test('a title in quotes is found: the metadata lane lists the session above the message hits', { timeout: 120_000 }, async () => {
  const all = await api('/api/sessions', { limit: 500 });
  const target = all.sessions.find((s) => s.title && s.title.split(/\s+/).length >= 3 && !s.title.includes('"'));
  const words = target.title.split(/\s+/).slice(0, 4).join(' ');
  const page = await openPage(browser, server.url);
  await page.fill('#q', `"${words}"`);
  await page.waitForSelector(`#lane .session-row[data-key="${target.session_key}"]`);
  const lane = await page.$$eval('#lane .session-row', (rows) => rows.map((r) => r.dataset.key));
  const expected = await api('/api/sessions', { q: `"${words}"`, limit: 5 });
  assert.deepEqual(lane, expected.sessions.map((s) => s.session_key));
  // Above the hits.
  const order = await page.evaluate(() => {
    const lane = document.getElementById('lane');
    const hits = document.getElementById('hits');
    return Boolean(lane.compareDocumentPosition(hits) & Node.DOCUMENT_POSITION_FOLLOWING);
  });
  assert.ok(order);
  await assertNotBlank(page, 'a search with the metadata lane');
  await page.click(`#lane .session-row[data-key="${target.session_key}"] .title`);
  await page.waitForSelector('#session .entry');
  assert.equal(await page.textContent('#session .session-meta .key'), target.session_key);
  await page.close();
});

test('deep links: the query, filters, open session and located hit are in the URL; back, forward and reload restore them', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  await page.fill('#q', 'strasse');
  await page.selectOption('select[name="sort"]', 'relevance');
  await waitResults(page);
  const searchUrl = page.url();
  assert.equal(new URL(searchUrl).searchParams.get('q'), 'strasse');
  assert.equal(new URL(searchUrl).searchParams.get('sort'), 'relevance');
  await page.click('.session-card .hit');
  await page.waitForSelector('#session .entry.located mark');
  const key = await page.$eval('.session-card', (c) => c.dataset.key);
  const hitUrl = new URL(page.url());
  assert.equal(hitUrl.searchParams.get('session'), key);
  assert.ok(hitUrl.searchParams.get('hit'), 'the locator');
  assert.match(hitUrl.searchParams.get('hl'), /^\d+-\d+(,\d+-\d+)*$/);
  const marks = await page.$$eval('#session .entry.located mark', (m) => m.map((x) => x.textContent));
  // Reload: the same search, the same session at the same hit, highlighted.
  await page.reload();
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
  await page.waitForSelector('#session .entry.located mark');
  assert.equal(await page.inputValue('#q'), 'strasse');
  assert.equal(await page.inputValue('select[name="sort"]'), 'relevance');
  assert.deepEqual(await page.$$eval('#session .entry.located mark', (m) => m.map((x) => x.textContent)), marks);
  await waitResults(page);
  assert.ok((await page.$$('.session-card')).length > 0);
  // Back: the session closes, the search stays; forward reopens it.
  await page.goBack();
  await page.waitForSelector('#session', { state: 'hidden' });
  assert.equal(page.url(), searchUrl);
  assert.equal(await page.inputValue('#q'), 'strasse');
  await page.goForward();
  await page.waitForSelector('#session .entry.located mark');
  assert.equal(new URL(page.url()).searchParams.get('session'), key);
  // Paging in the session is a new entry too.
  const later = await page.$('#session .pager button:last-child:not([disabled])');
  if (later) {
    await later.click();
    await page.waitForFunction(() => new URL(location.href).searchParams.has('offset'));
    await page.goBack();
    await page.waitForSelector('#session .entry.located');
  }
  // A hand-typed link to a session opens it.
  await page.goto(`${server.url}/?session=${encodeURIComponent(key)}`);
  await page.waitForSelector('#session .entry');
  assert.equal(await page.textContent('#session .session-meta .key'), key);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('back and forward walk searches and filters: a pause in typing or a picked filter is a new entry', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  await homeReady(page);
  await page.fill('#q', 'strasse');
  await waitResults(page);
  const strasse = await page.$$eval('.session-card', (c) => c.map((x) => x.dataset.key));
  await page.waitForTimeout(1700);
  await page.fill('#q', 'the');
  await waitResults(page);
  await page.uncheck('input[name="src-codex"]');
  await page.waitForFunction(() => new URL(location.href).searchParams.has('source'));
  await waitResults(page);
  await page.goBack();
  await page.waitForFunction(() => !new URL(location.href).searchParams.has('source'));
  assert.equal(await page.isChecked('input[name="src-codex"]'), true, 'the filter is restored');
  assert.equal(await page.inputValue('#q'), 'the');
  await page.goBack();
  await page.waitForFunction(() => new URL(location.href).searchParams.get('q') === 'strasse');
  assert.equal(await page.inputValue('#q'), 'strasse');
  await page.waitForFunction((keys) => JSON.stringify([...document.querySelectorAll('.session-card')].map((x) => x.dataset.key)) === JSON.stringify(keys), strasse);
  await page.goBack();
  await page.waitForFunction(() => !new URL(location.href).searchParams.has('q'));
  await homeReady(page);
  assert.ok((await page.$$('.recent .session-row')).length > 0, 'back to the home page');
  await page.goForward();
  await page.waitForFunction(() => new URL(location.href).searchParams.get('q') === 'strasse');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a tool-row hit opens online at scope=all with the tool row shown and highlighted', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  const seen = [];
  page.on('request', (r) => {
    if (r.url().includes('/api/session/')) seen.push(new URL(r.url()).searchParams.get('scope'));
  });
  await page.selectOption('select[name="scope"]', 'all');
  await page.selectOption('select[name="role"]', 'tool');
  await page.fill('#q', 'the');
  await waitResults(page);
  await page.click('.session-card .hit');
  const located = await page.waitForSelector('#session .entry.located');
  assert.match(await located.getAttribute('class'), /role-tool/);
  assert.ok((await located.$$('mark')).length > 0);
  assert.equal(await page.$('#session .notice'), null, 'neither stale nor "nearest"');
  assert.ok(seen.includes('all'), `the session request carries scope: ${seen}`);
  await page.close();
});

test('a tool-row hit opened at the default scope is not reported stale', { timeout: 120_000 }, async () => {
  const res = await api('/api/sessions/message-search', { q: 'the', scope: 'all', role: 'tool' });
  const s = res.sessions[0];
  const page = await openPage(browser, server.url);
  await page.evaluate(async ([key, hit]) => {
    const { SessionView } = await import('/js/session.js');
    const { online } = await import('/js/api.js');
    const view = new SessionView(document.getElementById('session'), () => online, () => {});
    await view.open(key, hit);
  }, [s.session_key, s.hits[0]]);
  const notice = await page.waitForSelector('#session .notice');
  const text = await notice.textContent();
  assert.doesNotMatch(text, /stale|unavailable/);
  assert.match(text, /not listed in this view/);
  await page.close();
});

test('the palette searches messages without superseded text and lists matching sessions', { timeout: 120_000 }, async () => {
  const all = await api('/api/sessions', { limit: 500 });
  const target = all.sessions.find((s) => s.title && s.title.split(/\s+/).length >= 3 && !/["\\]/.test(s.title));
  const words = target.title.split(/\s+/).slice(0, 3).join(' ');
  const page = await openPage(browser, server.url);
  const params = [];
  page.on('request', (r) => {
    if (r.url().includes('/api/sessions/message-search')) params.push(new URL(r.url()).searchParams);
  });
  await page.keyboard.press('Control+k');
  await page.waitForSelector('dialog#palette[open]');
  await page.keyboard.type(`"${words}"`);
  await page.waitForSelector('.palette-list li.session');
  const last = params[params.length - 1];
  assert.equal(last.get('include_superseded'), 'false');
  const labels = await page.$$eval('.palette-list li.session .label', (l) => l.map((e) => e.textContent));
  assert.ok(labels.includes(target.title), labels.join(' | '));
  await page.close();
});

test('the model picker lists distinct models with counts and filters the list and the search', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  await homeReady(page);
  const facets = await api('/api/sessions', { facets: 'true', limit: 1 });
  assert.ok(facets.models?.length > 1, 'the generated home records several models');
  const shown = await page.$$eval('.models li', (l) => l.map((li) => [li.querySelector('.model').dataset.model, Number(li.querySelector('.count').textContent)]));
  assert.deepEqual(shown, facets.models.map((m) => [m.model, m.sessions]));
  const pick = facets.models[facets.models.length - 1];
  await page.click(`.models .model[data-model="${pick.model}"]`);
  await page.waitForFunction((m) => new URL(location.href).searchParams.get('model') === m, pick.model);
  await homeReady(page);
  await page.waitForFunction((n) => document.querySelector('.home-main h2 .count')?.textContent.trim() === String(n), pick.sessions);
  assert.ok(pick.sessions < facets.total, 'the filter narrows the list');
  const expected = await api('/api/sessions', { model: pick.model.toUpperCase(), limit: 25 });
  assert.equal(expected.total, pick.sessions, 'case-insensitive over HTTP');
  assert.deepEqual(await rowKeys(page), expected.sessions.map((s) => s.session_key));
  for (const s of expected.sessions) assert.ok(s.models.includes(pick.model), s.session_key);
  assert.equal(await page.inputValue('input[name="model"]'), pick.model);
  // The picker still offers every model (it ignores its own filter).
  assert.equal(await page.$$eval('.models .model', (l) => l.length), facets.models.length);
  // A search under the filter gives the daemon's answer for it.
  await page.fill('#q', 'the');
  await waitResults(page);
  const hits = await api('/api/sessions/message-search', { q: 'the', model: pick.model });
  const mine = new Set((await api('/api/sessions', { model: pick.model, limit: 500 })).sessions.map((s) => s.session_key));
  assert.ok(hits.sessions.length > 0);
  for (const s of hits.sessions) assert.ok(mine.has(s.session_key), `${s.session_key} records ${pick.model}`);
  const cards = await page.$$eval('.session-card', (l) => l.map((c) => c.dataset.key));
  assert.deepEqual(cards, hits.sessions.map((s) => s.session_key));
  assert.deepEqual(page.errors, []);
  await page.close();
});
