// Lazy offline search (DESIGN §8 wave 2): "go offline" downloads the manifest
// and the store's index segments only; a search in the page fetches just the
// generations its candidates live in, and answers exactly as the daemon does
// and as the same page does once every generation is downloaded.

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
        out.push({ ok: false, error: e.code, message: e.message });
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
    const idb = await import('/js/idb.js');
    const { Engine, loadWasm } = await import('/js/engine.js');
    await loadWasm(new URL('/pkg/recall_core_bg.wasm', location.href));
    const engine = new Engine();
    for (const name of await idb.keys('generations')) engine.addGeneration(name, await idb.get('generations', name));
    engine.setManifest((await idb.get('meta', 'manifest')).bytes);
    return { out: rs.map((r) => engine.search(r)) };
  }, requests);

  let compared = 0;
  for (let i = 0; i < requests.length; i += 1) {
    const what = `request ${JSON.stringify(requests[i])}`;
    assert.deepEqual(lazy.out[i], complete.out[i], `lazy vs fully downloaded: ${what}`);
    if (expected[i].state === 'partial') continue; // the daemon's clock budget ran out
    assert.deepEqual(comparable(lazy.out[i]), comparable(expected[i]), `lazy vs daemon: ${what}`);
    compared += 1;
  }
  assert.ok(compared >= 140, `compared ${compared}`);
  assert.ok(expected.some((b) => b.ok && b.sessions.length > 3));
  t.diagnostic(`${compared} of ${requests.length} answers equal to the daemon's; all equal to the full copy's`);
  assert.deepEqual(page.errors, []);
  await page.close();
  await context.close();
});
