// The wasm core fed by a team bucket (issue #17, "the browser reads only what
// it needs"): a real SeaweedFS whose anonymous identity may only Read/List the
// bucket, with a CORS rule naming the dashboard's origin; `recall publish`
// puts a store there; the page's wasm core fetches the host folder by itself
// (catalog.json → snapshot → segments → the generations a search needs) and
// answers as the daemon serving the same store. A bucket whose CORS rule does
// not name the page is refused with a clear error, and nothing is kept.
//
// The page is not the daemon's dashboard: its policy (`connect-src 'self'`)
// lets it talk to the daemon only. A bucket is read by the engine served from
// another origin (here a small static server of web/ and pkg/ whose policy
// names the bucket), the deployment a team without a daemon has.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir, makeHome, serve, warm, launch, openPage, cleanup, comparable, BIN, REPO } from './lib/env.mjs';
import { requestMix } from './lib/requests.mjs';
import { startWeed, allowOrigins, KEY } from './lib/weed.mjs';

const BUCKET = 'recall-web-bucket';
const LONG = { timeout: 300_000 };

let dir;
let weed;
let server;
let browser;
let folder;
let site;

/**
 * Serves web/js and pkg/ from the working tree plus an empty page whose
 * policy lets it connect to `bucketOrigin`; `{url, close()}`.
 */
async function staticSite(bucketOrigin) {
  const csp = `default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self' ${bucketOrigin}; base-uri 'none'`;
  const types = { js: 'text/javascript', wasm: 'application/wasm', html: 'text/html' };
  const http = createServer(async (req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    try {
      if (path === '/') {
        res.writeHead(200, { 'content-type': 'text/html', 'content-security-policy': csp });
        res.end('<!doctype html><html data-ready="true"><title>bucket reader</title></html>');
        return;
      }
      if (!/^\/(js|pkg)\/[\w.-]+$/.test(path)) throw new Error('not served');
      const body = await readFile(join(REPO, path.startsWith('/pkg/') ? '' : 'web', path));
      res.writeHead(200, { 'content-type': types[path.split('.').pop()] || 'application/octet-stream', 'content-security-policy': csp });
      res.end(body);
    } catch {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise((ok) => http.listen(0, '127.0.0.1', ok));
  return { url: `http://127.0.0.1:${http.address().port}`, close: () => new Promise((ok) => http.close(ok)) };
}

before(async () => {
  dir = tempDir('recall-bucket-');
  weed = await startWeed(dir, BUCKET, {
    identities: [
      { name: 'admin', credentials: [{ accessKey: KEY, secretKey: KEY }], actions: ['Admin', 'Read', 'List', 'Write', 'Tagging'] },
      { name: 'anonymous', actions: [`Read:${BUCKET}`, `List:${BUCKET}`] },
    ],
  });
  const home = makeHome(dir, { sessions: 50, seed: 6 });
  const cli = (args) => execFileSync(BIN, ['--home', home, '--retention-days', '0', ...args], {
    encoding: 'utf8', env: { ...process.env, ...weed.env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  cli(['index']);
  const published = JSON.parse(cli(['publish', `s3://${BUCKET}/t1`, '--host-name', 'solo', '--json']));
  folder = `${weed.s3}/${BUCKET}/t1/hosts/${published.host_id}/`;
  server = await serve(home);
  await warm(server.url);
  site = await staticSite(new URL(weed.s3).origin);
  allowOrigins(weed, [site.url]);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  await site?.close();
  await weed?.stop();
  cleanup(dir);
});

async function fromServer(req) {
  return (await fetch(`${server.url}/api/sessions/message-search?${new URLSearchParams(req)}`)).json();
}

test('an anonymous page cannot write the bucket, and reads it only from the allowed origin', async () => {
  const put = await fetch(`${folder}catalog.json`, { method: 'PUT', body: '{}' });
  assert.equal(put.status, 403, 'anonymous writes are refused');
  const allowed = await fetch(`${folder}catalog.json`, { headers: { Origin: site.url } });
  assert.equal(allowed.headers.get('access-control-allow-origin'), site.url);
  const other = await fetch(`${folder}catalog.json`, { headers: { Origin: 'http://127.0.0.1:9' } });
  assert.equal(other.headers.get('access-control-allow-origin'), null);
});

test('the wasm core fetching from the bucket answers as the daemon, fetching only what it needs', LONG, async (t) => {
  const manifest = await (await fetch(`${server.url}/api/index/manifest`)).json();
  const total = new Set(Object.values(manifest.sessions).map((e) => e.generation_file)).size;
  const requests = [{ q: 'xsscanary' }, ...requestMix(150)];
  const expected = [];
  for (const req of requests) expected.push(await fromServer(req));

  const context = await browser.newContext();
  const page = await openPage(browser, site.url, { context });
  const asked = [];
  page.on('request', (r) => asked.push(r.url()));
  const got = await page.evaluate(async ({ base, reqs }) => {
    const { Engine, loadWasm } = await import('/js/engine.js');
    await loadWasm(new URL('/pkg/recall_core_bg.wasm', location.href));
    const engine = Engine.fromBucket(base);
    const seen = [];
    const sync = await engine.sync((p) => seen.push(p));
    const out = [];
    let afterFirst = null;
    for (const r of reqs) {
      out.push(await engine.searchFetching(r));
      if (afterFirst === null) afterFirst = await engine.cachedGenerations();
    }
    return { sync, progress: seen.length, out, afterFirst };
  }, { base: folder, reqs: requests });
  assert.equal(got.sync.lazy, true, 'the bucket serves segments');
  assert.equal(got.sync.sessions, Object.keys(manifest.sessions).length);
  assert.ok(got.progress >= 1);
  assert.ok(got.afterFirst < total / 4, `a rare-token search fetched ${got.afterFirst} of ${total} generations`);
  const fromBucket = asked.filter((u) => u.startsWith(folder));
  assert.ok(fromBucket.some((u) => u.endsWith('/catalog.json')));
  assert.ok(fromBucket.some((u) => u.includes('/snapshots/')));
  assert.ok(fromBucket.some((u) => u.includes('/segments/')));
  assert.ok(fromBucket.some((u) => u.includes('/generations/')));
  assert.deepEqual(asked.filter((u) => u.startsWith(server.url)), [], 'nothing was fetched from the daemon');

  let compared = 0;
  for (let i = 0; i < requests.length; i += 1) {
    if (expected[i].state === 'partial' || got.out[i].state === 'partial') continue; // a clock budget ran out
    assert.deepEqual(comparable(got.out[i]), comparable(expected[i]), `bucket vs daemon: ${JSON.stringify(requests[i])}`);
    compared += 1;
  }
  assert.ok(compared >= 140, `compared ${compared}`);
  assert.ok(expected.some((b) => b.ok && b.sessions.length > 3));
  t.diagnostic(`${compared} of ${requests.length} bucket-fed answers equal to the daemon's; ${got.afterFirst} of ${total} generations after the first search`);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('a bucket whose CORS rule does not name the page is refused clearly and nothing is kept', LONG, async () => {
  allowOrigins(weed, ['http://127.0.0.1:9']);
  try {
    const context = await browser.newContext();
    const page = await openPage(browser, site.url, { context });
    const res = await page.evaluate(async (base) => {
      const { Engine, loadWasm } = await import('/js/engine.js');
      await loadWasm(new URL('/pkg/recall_core_bg.wasm', location.href));
      const engine = Engine.fromBucket(base);
      let error = null;
      try {
        await engine.sync();
      } catch (e) {
        error = String(e?.message || e);
      }
      return { error, stored: await engine.stored() };
    }, folder);
    assert.match(res.error || '', /catalog\.json could not be fetched/);
    assert.equal(res.stored, null);
    await context.close();
  } finally {
    allowOrigins(weed, [site.url]);
  }
});
