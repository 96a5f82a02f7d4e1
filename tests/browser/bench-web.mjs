// The dashboard benchmark (run by bench/web.sh against a running `recall
// serve`): keystroke-to-rendered-results latency online and offline (p50,
// p95), the offline download, and wasm search time in the page for the same
// requests the native bench-search times.
//
//   node bench-web.mjs URL QUERIES.jsonl OUT.json [rounds]

import { readFileSync, writeFileSync } from 'node:fs';
import { launch, newContext, warm } from './lib/env.mjs';

const [url, queriesFile, out, roundsArg = '3'] = process.argv.slice(2);
if (!url || !queriesFile || !out) {
  console.error('usage: node bench-web.mjs URL QUERIES.jsonl OUT.json [rounds]');
  process.exit(2);
}
const rounds = Number(roundsArg);
const requests = readFileSync(queriesFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const words = [...new Set(requests.map((r) => r.q))];

function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p) => s[Math.min(s.length - 1, Math.round((s.length - 1) * p))];
  return { n: s.length, p50_ms: +at(0.5).toFixed(1), p95_ms: +at(0.95).toFixed(1), max_ms: +s[s.length - 1].toFixed(1) };
}

/** Types each query as a user would (one fill = one input event) and times the render. */
async function keystrokes(page, label) {
  const times = [];
  for (let round = 0; round <= rounds; round += 1) {
    for (const q of words) {
      await page.fill('#q', '');
      const done = page.evaluate((want) => new Promise((resolve) => {
        const on = (e) => {
          if (e.detail.q === want && !e.detail.more) {
            document.removeEventListener('recall:rendered', on);
            resolve(e.detail.ms);
          }
        };
        document.addEventListener('recall:rendered', on);
      }), q);
      await page.fill('#q', q);
      const ms = await done;
      if (round > 0) times.push(ms); // round 0 warms
    }
  }
  console.error(`${label}: ${JSON.stringify(stats(times))}`);
  return stats(times);
}

const browser = await launch();
const context = await newContext(browser);
const page = await context.newPage();
page.on('pageerror', (e) => console.error('page error:', String(e)));
await warm(url);
await page.goto(url);
await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');

const result = { queries: requests.length, distinct_q: words.length, rounds, debounce_ms: 225 };
result.online = await keystrokes(page, 'online');

const t0 = Date.now();
await page.click('#offline-btn');
await page.waitForSelector('#mode-badge:not([hidden])', { timeout: 600_000 });
result.offline_download_ms = Date.now() - t0;
// What the offline copy holds (the wasm core's Cache API store): generation bytes.
result.offline_bytes = await page.evaluate(async () => {
  const cache = await caches.open('recall-offline-v1');
  let total = 0;
  for (const req of await cache.keys()) {
    if (new URL(req.url).pathname.startsWith('/api/index/generations/')) total += (await (await cache.match(req)).arrayBuffer()).byteLength;
  }
  return total;
});
result.offline = await keystrokes(page, 'offline');

// wasm search in the page (main thread, warm), the same requests as native.
result.wasm = await page.evaluate(async ({ reqs, rounds: n }) => {
  const { Engine, loadWasm } = await import('/js/engine.js');
  await loadWasm(new URL('/pkg/recall_core_bg.wasm', location.href));
  const engine = Engine.fromDaemon(location.origin);
  const t0 = performance.now();
  await engine.load(); // the copy "go offline" downloaded, from the cache
  await engine.fill(); // every generation, from the cache (the background fill kept them)
  const loadMs = performance.now() - t0;
  for (const r of reqs) engine.search(r); // warm
  const times = [];
  let partial = 0;
  for (let i = 0; i < n; i += 1) {
    for (const r of reqs) {
      const t = performance.now();
      const res = engine.search(r);
      times.push(performance.now() - t);
      if (res.state === 'partial') partial += 1;
    }
  }
  times.sort((a, b) => a - b);
  const at = (p) => times[Math.min(times.length - 1, Math.round((times.length - 1) * p))];
  return { load_ms: +loadMs.toFixed(0), searches: times.length, partial, p50_ms: +at(0.5).toFixed(2), p95_ms: +at(0.95).toFixed(2), max_ms: +times[times.length - 1].toFixed(2) };
}, { reqs: requests, rounds: 5 });
console.error(`wasm: ${JSON.stringify(result.wasm)}`);

writeFileSync(out, JSON.stringify(result, null, 2));
await browser.close();
