// Chromium parity of the session list, the session view, lineage and the
// one-session queries (issue #14): the wasm core in the page (the engine
// offline mode and reports use) answers exactly as the daemon's routes, on
// every session of a generated home. Compared as canonical JSON (keys
// sorted), so a single differing value fails.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDir, makeHome, serve, warm, launch, newContext, openPage, cleanup, AGENTS } from './lib/env.mjs';

const LONG = { timeout: 300_000 };

let dir;
let server;
let browser;

before(async () => {
  dir = tempDir();
  const home = makeHome(dir, { sessions: 40, seed: 2, agents: true });
  server = await serve(home);
  await warm(server.url);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  cleanup(dir);
});

/** JSON with every object's keys sorted. */
function canon(v) {
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canon(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

async function daemon(path, params = {}) {
  const qs = new URLSearchParams(params).toString();
  const res = await fetch(`${server.url}${path}${qs ? `?${qs}` : ''}`);
  return res.json();
}

const word = (text) => (text || '').split(/[^\p{L}\p{N}]+/u).find((w) => [...w].length >= 5);

test('the session list, session view, lineage and one-session queries answer in Chromium exactly as the daemon', LONG, async (t) => {
  const manifest = await daemon('/api/index/manifest');
  const keys = Object.keys(manifest.sessions);
  assert.ok(keys.length >= 20, `${keys.length} sessions`);
  // The agents gen.py does not write join from their real sessions.
  const planted = AGENTS.map((a) => a.source);
  for (const src of planted) {
    assert.ok(keys.some((k) => manifest.sessions[k].source === src), `no ${src} session in the manifest`);
  }
  // [daemon path, params, engine call]
  const cases = [];
  const list = (params) => cases.push([`/api/sessions`, params, { fn: 'sessions', args: [params] }]);
  list({});
  list({ limit: '3' });
  list({ facets: 'true', tz: '120' });
  list({ parent: 'none', limit: '500' });
  list({ presence: 'present', no_cwd: 'false' });
  for (const key of keys) {
    const e = manifest.sessions[key];
    const k = encodeURIComponent(key);
    list({ source: e.source, limit: '5' });
    if (e.cwd) list({ cwd: e.cwd, facets: 'true' });
    list({ id: e.session_id.slice(0, 5) });
    if (e.title) list({ title: word(e.title) || e.title, limit: '500' });
    if (e.branch) list({ branch: e.branch, q: key.split(':')[0] });
    const view = (params) => cases.push([`/api/session/${k}`, params, { fn: 'session', args: [key, params] }]);
    view({});
    view({ scope: 'all', limit: '500' });
    view({ offset: '2', limit: '3' });
    cases.push([`/api/session/${k}/trace`, {}, { fn: 'trace', args: [key] }]);
    const q = (route, params, request) => cases.push([`/api/session/${k}/${route}`, params, { fn: 'sessionQuery', args: [key, request] }]);
    q('surface', { limit: '4' }, { query: 'surface', limit: 4 });
    q('classify', {}, { query: 'classify' });
    q('filter', { state: 'superseded' }, { query: 'filter', filter: { state: 'superseded' } });
    q('window', { index: '3', before: '2', after: '2' }, { query: 'window', at: { index: 3 }, before: 2, after: 2 });
    q('event-trace', { index: '1' }, { query: 'event_trace', at: { index: 1 } });
  }
  // Malformed filters: one error (code and message) from core, both ways.
  const k0 = encodeURIComponent(keys[0]);
  for (const [params, filter] of [
    [{ state: 'bogus' }, { state: 'bogus' }],
    [{ role: 'robot' }, { roles: ['robot'] }],
    [{ subagent: 'maybe' }, { subagent: 'maybe' }],
  ]) {
    cases.push([`/api/session/${k0}/filter`, params, { fn: 'sessionQuery', args: [keys[0], { query: 'filter', filter }] }]);
  }
  // Words and locators come from the daemon's own pages.
  const worded = [...keys.slice(0, 20), ...keys.filter((k) => planted.includes(manifest.sessions[k].source))];
  for (const key of worded) {
    const k = encodeURIComponent(key);
    const page = await daemon(`/api/session/${k}`, { scope: 'all', limit: '500' });
    const step = Math.max(1, Math.floor(page.entries.length / 3));
    for (let i = 0; i < page.entries.length; i += step) {
      const loc = JSON.stringify(page.entries[i].locator);
      cases.push([`/api/session/${k}`, { locate: loc, limit: '5' }, { fn: 'session', args: [key, { locate: loc, limit: '5' }] }]);
      const w = word(page.entries[i].text);
      if (w) {
        cases.push([`/api/session/${k}/search`, { q: w }, { fn: 'sessionQuery', args: [key, { query: 'search', q: w }] }]);
        cases.push([`/api/session/${k}/filter`, { text: w.toUpperCase(), role: 'user,assistant' }, { fn: 'sessionQuery', args: [key, { query: 'filter', filter: { text: w.toUpperCase(), roles: ['user', 'assistant'] } }] }]);
      }
    }
  }
  const want = [];
  for (const [path, params] of cases) want.push(await daemon(path, params));
  const page = await openPage(browser, server.url);
  const got = await page.evaluate(async (calls) => {
    const { Engine, loadWasm } = await import('/js/engine.js');
    await loadWasm();
    const engine = new Engine();
    const bytes = async (url) => new Uint8Array(await (await fetch(url)).arrayBuffer());
    const m = await bytes('/api/index/manifest');
    engine.setManifest(m);
    for (const e of Object.values(engine.manifest.sessions)) {
      engine.addGeneration(e.generation_file, await bytes(`/api/index/generations/${e.generation_file}`));
    }
    return calls.map((c) => engine[c.fn](...c.args));
  }, cases.map((c) => c[2]));
  let differences = 0;
  let located = 0;
  for (let i = 0; i < cases.length; i += 1) {
    if (canon(got[i]) !== canon(want[i])) {
      differences += 1;
      assert.equal(canon(got[i]), canon(want[i]), `${cases[i][0]} ${JSON.stringify(cases[i][1])}`);
    }
    if (want[i].locate?.state === 'resolved') located += 1;
  }
  assert.equal(differences, 0);
  assert.ok(want.filter((w) => w.ok).length * 10 >= cases.length * 9, 'nearly every case answers');
  assert.ok(located >= 20, `${located} located hits`);
  assert.ok(want.some((w) => w.descendants?.length), 'some lineage has descendants');
  assert.ok(want.some((w) => w.total_hits > 0), 'some in-session search finds hits');
  assert.equal(want.filter((w) => w.error === 'invalid_filter').length, 3, 'the malformed filters are refused');
  t.diagnostic(`${cases.length} requests, 0 differences, ${located} located hits`);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('offline, the home page and the metadata lane list the sessions the daemon lists, from the core in the worker', LONG, async () => {
  const context = await newContext(browser);
  const page = await openPage(browser, server.url, { context });
  await page.click('#offline-btn');
  await page.waitForSelector('#mode-badge:not([hidden])');
  const asked = [];
  page.on('request', (r) => {
    if (new URL(r.url()).pathname === '/api/sessions') asked.push(r.url());
  });
  await page.goto(server.url);
  await page.waitForSelector('#mode-badge:not([hidden])');
  await page.waitForSelector('.recent .session-row');
  const want = await daemon('/api/sessions', { limit: '25' });
  const rows = await page.$$eval('.recent .session-row', (r) => r.map((x) => x.dataset.key));
  assert.deepEqual(rows, want.sessions.map((s) => s.session_key));
  const title = want.sessions[0].title;
  const w = word(title) || title;
  await page.fill('#q', w);
  await page.waitForSelector('#lane .session-row');
  const lane = await page.$$eval('#lane .session-row', (r) => r.map((x) => x.dataset.key));
  const laneWant = await daemon('/api/sessions', { q: w, limit: '5' });
  assert.deepEqual(lane, laneWant.sessions.map((s) => s.session_key));
  assert.deepEqual(asked, [], 'offline, the list is not asked of the daemon');
  assert.deepEqual(page.errors, []);
  await page.close();
  await context.close();
});
