// Offline mode: the index downloaded into IndexedDB and searched in the page
// by the wasm core in a worker gives the same answers as the daemon, and keeps
// working (page and search) when the daemon is stopped.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDir, makeHome, serve, warm, launch, newContext, openPage, cleanup, comparable, AGENTS } from './lib/env.mjs';
import { requestMix } from './lib/requests.mjs';

// Development mode (static files from disk) blocks service workers.
const DEV = !!process.env.RECALL_WEB_DIR;
const LONG = { timeout: 300_000 };

let dir;
let home;
let server;
let browser;
let context;

before(async () => {
  dir = tempDir();
  home = makeHome(dir, { sessions: 60, agents: true });
  server = await serve(home);
  await warm(server.url);
  browser = await launch();
  context = await newContext(browser);
});

after(async () => {
  await browser?.close();
  await server?.stop();
  cleanup(dir);
});

async function fromServer(req) {
  const res = await fetch(`${server.url}/api/sessions/message-search?${new URLSearchParams(req)}`);
  return res.json();
}

test('going offline downloads the index with progress and shows the offline badge', LONG, async () => {
  const page = await openPage(browser, server.url, { context });
  assert.equal(await page.isVisible('#mode-badge'), false);
  if (!DEV) await page.evaluate(() => navigator.serviceWorker.ready);
  const sawProgress = page.waitForSelector('#download:not([hidden]) progress');
  await page.click('#offline-btn');
  await sawProgress;
  await page.waitForSelector('#mode-badge:not([hidden])');
  assert.equal((await page.textContent('#mode-badge')).trim(), 'OFFLINE');
  assert.match(await page.textContent('#index-status'), /Offline copy: revision \d+/);
  await page.close();
});

test('at least 200 requests answer the same offline (wasm in the page) as from the daemon', LONG, async (t) => {
  const page = await openPage(browser, server.url, { context });
  await page.waitForSelector('#mode-badge:not([hidden])');
  // Each agent gen.py does not write, alone and beside another source.
  const planted = AGENTS.map((a) => a.source);
  const perSource = planted.flatMap((source) => [
    { q: 'the', source, scope: 'all' },
    { q: 'a', source: `${source},codex`, limit: '3' },
  ]);
  const requests = [...requestMix(200), ...perSource];
  const expected = [];
  for (const req of requests) expected.push(await fromServer(req));
  // Follow a few cursors too.
  const paged = [];
  for (const body of expected.slice(0, 40)) {
    if (body.cursor) paged.push({ ...requests[expected.indexOf(body)], cursor: body.cursor });
  }
  for (const req of paged) expected.push(await fromServer(req));
  const all = [...requests, ...paged];
  assert.ok(all.length >= 200);
  const got = await page.evaluate(async (reqs) => {
    const { offline } = await import('/js/offline.js');
    const out = [];
    for (const r of reqs) {
      try {
        out.push(await offline.search(r));
      } catch (e) {
        out.push({ ok: false, error: e.code, message: e.message, ...(e.at === undefined ? {} : { at: e.at }) });
      }
    }
    return out;
  }, all);
  let compared = 0;
  for (let i = 0; i < all.length; i += 1) {
    if (expected[i].state === 'partial') continue; // the daemon's clock budget ran out: not comparable
    if (got[i].partial_reason === 'timeout') continue; // so did the page's (performance.now())
    assert.deepEqual(comparable(got[i]), comparable(expected[i]), `request ${JSON.stringify(all[i])}`);
    compared += 1;
  }
  assert.ok(compared >= 200, `compared ${compared}`);
  t.diagnostic(`${compared} of ${all.length} answers compared equal`);
  assert.ok(expected.some((b) => b.ok && b.sessions.length > 3));
  for (const source of planted) {
    const i = requests.findIndex((r) => r.source === source);
    assert.ok(expected[i].ok && expected[i].sessions.length > 0, `no ${source} hit for ${JSON.stringify(requests[i])}`);
    assert.ok(expected[i].sessions.every((s) => s.source === source), `${source} filter`);
  }
  await page.close();
});

test('offline, the model facet and the model filter answer as the daemon does', LONG, async () => {
  const page = await openPage(browser, server.url, { context });
  await page.waitForSelector('#mode-badge:not([hidden])');
  const get = async (path, params) => (await fetch(`${server.url}${path}?${new URLSearchParams(params)}`)).json();
  const facets = await get('/api/sessions', { facets: 'true', limit: 5 });
  assert.ok(facets.models?.length > 1, 'the generated home records several models');
  const model = facets.models[0].model.toUpperCase();
  const expected = [
    facets,
    await get('/api/sessions', { model, limit: 50 }),
    await get('/api/sessions/message-search', { q: 'the', model }),
  ];
  const got = await page.evaluate(async (m) => {
    const { offline } = await import('/js/offline.js');
    return [
      await offline.sessions({ facets: 'true', limit: 5 }),
      await offline.sessions({ model: m, limit: 50 }),
      await offline.search({ q: 'the', model: m }),
    ];
  }, model);
  assert.ok(expected[1].total > 0 && expected[1].total < facets.total);
  assert.deepEqual(got[0].models, expected[0].models);
  assert.deepEqual(got[1], expected[1]);
  assert.deepEqual(comparable(got[2]), comparable(expected[2]));
  await page.close();
});

test('offline session pages match the daemon entry for entry, superseded flags included', LONG, async (t) => {
  const page = await openPage(browser, server.url, { context });
  await page.waitForSelector('#mode-badge:not([hidden])');
  const manifest = await (await fetch(`${server.url}/api/index/manifest`)).json();
  const keys = Object.keys(manifest.sessions);
  const fields = ['index', 'total_index', 'role', 'ts_ms', 'seq', 'superseded', 'truncated', 'subagent', 'text', 'locator'];
  const pick = (e) => Object.fromEntries(fields.map((f) => [f, e[f]]));
  const got = await page.evaluate(async (ks) => {
    const { offline } = await import('/js/offline.js');
    const out = [];
    for (const k of ks) out.push(await offline.session(k, { limit: 500, scope: 'all' }));
    return out;
  }, keys);
  let superseded = 0;
  for (let i = 0; i < keys.length; i += 1) {
    const want = await (await fetch(`${server.url}/api/session/${encodeURIComponent(keys[i])}?limit=500&scope=all`)).json();
    assert.equal(got[i].total, want.total, keys[i]);
    assert.deepEqual(got[i].entries.map(pick), want.entries.map(pick), keys[i]);
    superseded += want.entries.filter((e) => e.superseded).length;
  }
  assert.ok(superseded > 0, 'the corpus has superseded records');
  t.diagnostic(`${keys.length} sessions, ${superseded} superseded entries`);
  await page.close();
});

test('with the daemon stopped, the page reloads and searches offline', { ...LONG, skip: DEV && 'service workers are blocked in development mode' }, async () => {
  await server.stop();
  const page = await openPage(browser, `${server.url}/?q=strasse`, { context });
  await page.waitForSelector('#mode-badge:not([hidden])');
  await page.waitForSelector('.session-card');
  const marks = await page.$$eval('.session-card mark', (m) => m.map((x) => x.textContent));
  assert.ok(marks.length > 0);
  await page.fill('#q', 'xsscanary');
  await page.waitForFunction(() => document.querySelector('.session-card')?.textContent.includes('<img src=x onerror=alert(1)>'));
  await page.click('.session-card .hit');
  await page.waitForSelector('#session .entry.located');
  assert.deepEqual(page.dialogs, []);
  await page.close();
});
