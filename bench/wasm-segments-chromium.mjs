// The browser half of bench/wasm-segments.sh: the shipped pkg/ in headless
// Chromium (the engine the dashboard and the report viewer run in), holding
// the same segment files and generations as core/examples/segment_search.rs
// and timing the same requests as bench/wasm-segments.mjs does under Node.
// A loopback-only static server hands the page pkg/ and the data directory.
//
//   node bench/wasm-segments-chromium.mjs DIR QUERIES ROUNDS
// RECALL_API=object times `search` (JS objects) instead of `searchJson`.
import { createServer } from 'node:http';
import { readFileSync, existsSync, statSync } from 'node:fs';
import { join, dirname, normalize, extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch } from '../tests/browser/lib/env.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const [dir, queries, rounds] = process.argv.slice(2);
const pkg = process.env.RECALL_PKG || join(here, '../pkg');
const roots = { '/pkg/': pkg, '/data/': dir };
// Cross-origin isolation: without it Chromium coarsens performance.now() to
// 100 µs, too coarse for sub-millisecond searches (isolated: 5 µs).
const isolated = { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' };
const types = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };

const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  if (url.pathname === '/') {
    res.writeHead(200, { ...isolated, 'content-type': 'text/html' }).end('<!doctype html><title>bench</title>');
    return;
  }
  for (const [prefix, root] of Object.entries(roots)) {
    if (!url.pathname.startsWith(prefix)) continue;
    const file = normalize(join(root, decodeURIComponent(url.pathname.slice(prefix.length))));
    if (file.startsWith(normalize(root)) && existsSync(file) && statSync(file).isFile()) {
      res.writeHead(200, { ...isolated, 'content-type': types[extname(file)] || 'application/octet-stream' });
      res.end(readFileSync(file));
      return;
    }
  }
  res.writeHead(404).end();
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${server.address().port}`;

const reqs = readFileSync(queries, 'utf8').split('\n').filter((l) => l.trim());
const segments = readFileSync(join(dir, 'segments.txt'), 'utf8').split('\n').filter(Boolean);
const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
const generations = [...new Set(Object.values(manifest.sessions).map((e) => e.generation_file))].sort();

const browser = await launch();
try {
  const page = await browser.newPage();
  await page.goto(`${origin}/`);
  const result = await page.evaluate(async ({ reqs, segments, generations, rounds, api }) => {
    const { default: init, Index } = await import('/pkg/recall_core.js');
    await init({ module_or_path: '/pkg/recall_core_bg.wasm' });
    const bytes = async (path) => new Uint8Array(await (await fetch(path)).arrayBuffer());
    const files = {
      segments: await Promise.all(segments.map((s) => bytes(`/data/segments/${s}`))),
      generations: await Promise.all(generations.map((g) => bytes(`/data/generations/${g}`))),
      manifest: await bytes('/data/manifest.json'),
    };
    const t0 = performance.now();
    const index = new Index();
    segments.forEach((s, i) => index.addSegment(s, files.segments[i]));
    generations.forEach((g, i) => index.addGeneration(g, files.generations[i]));
    index.setManifest(files.manifest);
    const loadMs = performance.now() - t0;
    const objects = reqs.map((r) => JSON.parse(r));
    const run = api === 'object' ? (j) => index.search(objects[j]) : api === 'parse' ? (j) => JSON.parse(index.searchJson(reqs[j])) : (j) => index.searchJson(reqs[j]);
    reqs.forEach((_, j) => run(j));
    const times = [];
    const each = reqs.map(() => []);
    for (let i = 0; i < rounds; i += 1) {
      reqs.forEach((_, j) => {
        const t = performance.now();
        run(j);
        const ms = performance.now() - t;
        times.push(ms);
        each[j].push(ms);
      });
    }
    times.sort((a, b) => a - b);
    const at = (p) => times[Math.round((times.length - 1) * p)];
    const mean = times.reduce((a, b) => a + b, 0) / times.length;
    const perRequest = each.map((v) => v.sort((a, b) => a - b)[Math.floor(v.length / 2)]);
    return { isolated: self.crossOriginIsolated, searches: times.length, p50_ms: at(0.5), p95_ms: at(0.95), mean_ms: mean, load_ms: loadMs, per_request_p50_ms: perRequest };
  }, { reqs, segments, generations, rounds: Number(rounds), api: process.env.RECALL_API });
  console.log(JSON.stringify({ ...result, browser: browser.version() }));
} finally {
  await browser.close();
  server.close();
}
