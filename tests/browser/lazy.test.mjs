// Lazy offline search (DESIGN §8 wave 2, issue #17): "go offline" has the
// wasm core download the manifest and the store's index segments only (web-sys
// fetch, kept in the Cache API); a search in the page fetches just the
// generations its candidates live in, and answers exactly as the daemon does
// and as the same page does once every generation is downloaded. The page's
// budget clock is performance.now(): a clock that jumps makes a search run
// out of time, where the frozen clock of the byte-exact path never does.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDir, makeHome, serve, warm, launch, newContext, openPage, cleanup, comparable } from './lib/env.mjs';
import { requestMix } from './lib/requests.mjs';

const LONG = { timeout: 300_000 };

let dir;
let server;
let browser;

before(async () => {
  dir = tempDir();
  const home = makeHome(dir, { sessions: 60, seed: 4 });
  server = await serve(home);
  await warm(server.url);
  browser = await launch();
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

/** Runs `reqs` through the offline backend in the page; also counts the cached generations after the first. */
function offlineSearches(page, reqs) {
  return page.evaluate(async (rs) => {
    const off = await import('/js/offline.js');
    const out = [];
    let afterFirst = null;
    for (const r of rs) {
      try {
        out.push(await off.offline.search(r));
      } catch (e) {
        out.push({ ok: false, error: e.code, message: e.message, ...(e.at === undefined ? {} : { at: e.at }) });
      }
      if (afterFirst === null) afterFirst = await off.cachedGenerations();
    }
    return { out, afterFirst, after: await off.cachedGenerations() };
  }, reqs);
}

test('searching before the generations are downloaded answers as the daemon and as the full copy', LONG, async (t) => {
  const manifest = await (await fetch(`${server.url}/api/index/manifest`)).json();
  const total = new Set(Object.values(manifest.sessions).map((e) => e.generation_file)).size;
  const segs = await (await fetch(`${server.url}/api/index/segments`)).json();
  assert.ok(segs.segments.length > 0, 'the daemon serves segments');

  const context = await newContext(browser);
  const page = await openPage(browser, server.url, { context });
  const dl = await page.evaluate(async () => {
    const off = await import('/js/offline.js');
    const seen = [];
    const r = await off.download((p) => seen.push(p), { fill: false });
    await off.open();
    return { ...r, progress: seen.length, cached: await off.cachedGenerations() };
  });
  assert.equal(dl.lazy, true, 'the download took the segment path');
  assert.equal(dl.cached, 0, 'going offline downloaded no generation');
  assert.ok(dl.progress >= 2, 'progress was reported');

  const requests = [{ q: 'xsscanary' }, ...requestMix(150)];
  const expected = [];
  for (const req of requests) expected.push(await fromServer(req));
  const lazy = await offlineSearches(page, requests);
  t.diagnostic(`generations cached: ${lazy.afterFirst} after the first search, ${lazy.after} after ${requests.length}, of ${total}`);
  assert.ok(lazy.afterFirst < total / 4, `a rare-token search fetched ${lazy.afterFirst} of ${total} generations`);

  // Now download everything, and answer from an index that holds every
  // generation and no store segment (the old offline copy).
  const full = await page.evaluate(async () => {
    const off = await import('/js/offline.js');
    await off.fill();
    return off.cachedGenerations();
  });
  assert.equal(full, total, 'the fill downloaded every generation');
  const complete = await page.evaluate(async (rs) => {
    const { Engine, loadWasm } = await import('/js/engine.js');
    await loadWasm(new URL('/pkg/recall_core_bg.wasm', location.href));
    const cache = await caches.open('recall-offline-v1');
    const body = async (req) => new Uint8Array(await (await cache.match(req)).arrayBuffer());
    const engine = new Engine();
    let generations = 0;
    for (const req of await cache.keys()) {
      const path = new URL(req.url).pathname;
      if (!path.startsWith('/api/index/generations/')) continue;
      engine.addGeneration(path.split('/').pop(), await body(req));
      generations += 1;
    }
    engine.setManifest(await body(`${location.origin}/api/index/manifest`));
    // The frozen clock (searchJson): never cut short by the budget.
    return { generations, out: rs.map((r) => JSON.parse(engine.index.searchJson(JSON.stringify(r)))) };
  }, requests);
  assert.equal(complete.generations, total, 'the cache holds every generation');

  let compared = 0;
  let timedOut = 0;
  for (let i = 0; i < requests.length; i += 1) {
    const what = `request ${JSON.stringify(requests[i])}`;
    assert.notEqual(complete.out[i].partial_reason, 'timeout', `the frozen clock never runs out: ${what}`);
    if (lazy.out[i].partial_reason === 'timeout') {
      timedOut += 1; // the page's real clock ran out: not comparable
      continue;
    }
    assert.deepEqual(comparable(lazy.out[i]), comparable(complete.out[i]), `lazy vs fully downloaded: ${what}`);
    if (expected[i].state === 'partial') continue; // the daemon's clock budget ran out
    assert.deepEqual(comparable(lazy.out[i]), comparable(expected[i]), `lazy vs daemon: ${what}`);
    compared += 1;
  }
  assert.ok(compared >= 140, `compared ${compared}`);
  assert.ok(expected.some((b) => b.ok && b.sessions.length > 3));
  assert.ok(timedOut <= 5, `${timedOut} lazy searches ran out of time`);
  t.diagnostic(`${compared} of ${requests.length} answers equal to the daemon's; ${requests.length - timedOut} equal to the full copy's`);
  assert.deepEqual(page.errors, []);
  await page.close();
  await context.close();
});

test('a new index reopens the copy from the cache alone and answers the same, without one fetch', LONG, async () => {
  const context = await newContext(browser);
  const page = await openPage(browser, server.url, { context });
  const requests = [{ q: 'xsscanary' }, ...requestMix(30)];
  const r = await page.evaluate(async (rs) => {
    const { Engine, loadWasm } = await import('/js/engine.js');
    await loadWasm(new URL('/pkg/recall_core_bg.wasm', location.href));
    const online = Engine.fromDaemon(location.origin);
    const synced = await online.sync();
    const first = [];
    for (const q of rs) first.push(await online.searchFetching(q));
    // A new index in a page whose every fetch fails (the daemon is gone):
    // the copy and the generations searched before come from the cache.
    const realFetch = window.fetch;
    let fetches = 0;
    window.fetch = () => {
      fetches += 1;
      return Promise.reject(new TypeError('offline'));
    };
    try {
      const offline = Engine.fromDaemon(location.origin);
      const opened = await offline.load();
      const second = [];
      for (const q of rs) second.push(await offline.searchFetching(q));
      let refused = null;
      try {
        await Engine.fromDaemon(location.origin).sync();
      } catch (e) {
        refused = String(e.message);
      }
      return { synced, opened, first, second, fetches, refused, stored: await offline.stored() };
    } finally {
      window.fetch = realFetch;
    }
  }, requests);
  assert.equal(r.opened.revision, r.synced.revision);
  assert.equal(r.opened.segments, r.synced.segments);
  assert.equal(r.opened.fetched, 0);
  assert.equal(r.stored.revision, r.synced.revision);
  assert.match(r.refused, /could not be fetched: offline/, 'a sync without the network fails clearly');
  assert.equal(r.fetches, 1, 'only the refused sync tried the network');
  for (let i = 0; i < requests.length; i += 1) {
    if (r.first[i].partial_reason === 'timeout' || r.second[i].partial_reason === 'timeout') continue;
    assert.deepEqual(comparable(r.second[i]), comparable(r.first[i]), `request ${JSON.stringify(requests[i])}`);
  }
  await context.close();
});

test('the page budget clock is performance.now(): a clock that jumps answers partial/timeout', LONG, async () => {
  const context = await newContext(browser);
  const page = await openPage(browser, server.url, { context });
  const r = await page.evaluate(async () => {
    const { Engine, loadWasm } = await import('/js/engine.js');
    await loadWasm(new URL('/pkg/recall_core_bg.wasm', location.href));
    const engine = Engine.fromDaemon(location.origin);
    await engine.sync();
    await engine.fill();
    const req = { q: 'the', scope: 'all', limit: 50 };
    const normal = engine.search(req);
    const real = performance.now;
    let t = real.call(performance);
    performance.now = () => (t += 1000); // one second passes per reading
    let slow;
    let slowLazy;
    let frozen;
    try {
      slow = engine.search(req);
      slowLazy = await engine.searchFetching(req);
      frozen = JSON.parse(engine.index.searchJson(JSON.stringify(req)));
    } finally {
      performance.now = real;
    }
    const pick = (b) => ({ state: b.state, reason: b.partial_reason ?? null, took: b.took_ms, n: b.sessions.length });
    return { normal: pick(normal), slow: pick(slow), slowLazy: pick(slowLazy), frozen: pick(frozen) };
  });
  assert.equal(r.normal.reason, null, JSON.stringify(r));
  assert.ok(r.normal.n > 3);
  for (const b of [r.slow, r.slowLazy]) {
    assert.equal(b.state, 'partial', JSON.stringify(r));
    assert.equal(b.reason, 'timeout', JSON.stringify(r));
    assert.ok(b.took >= 1000, `took_ms ${b.took} comes from the jumping clock`);
  }
  assert.deepEqual(r.frozen, { ...r.normal, took: 0 }, 'the frozen clock (searchJson, the byte ABI) ignores performance.now()');
  await context.close();
});
