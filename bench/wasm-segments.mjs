// The wasm half of bench/wasm-segments.sh: the shipped pkg/ (Node's V8, the
// engine Chromium uses) holding the same segment files and generations as
// core/examples/segment_search.rs, timing the same requests.
//
//   node bench/wasm-segments.mjs DIR QUERIES ROUNDS
import { readFileSync, readdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const [dir, queries, rounds] = process.argv.slice(2);
const pkg = process.env.RECALL_PKG || join(here, '../pkg'); // another build, to compare
const { initSync, Index } = await import(join(pkg, 'recall_core.js'));
initSync({ module: readFileSync(join(pkg, 'recall_core_bg.wasm')) });
const t0 = performance.now();
const index = new Index();
for (const name of readFileSync(join(dir, 'segments.txt'), 'utf8').split('\n').filter(Boolean)) {
  index.addSegment(name, readFileSync(join(dir, 'segments', name)));
}
for (const name of readdirSync(join(dir, 'generations'))) {
  index.addGeneration(name, readFileSync(join(dir, 'generations', name)));
}
index.setManifest(readFileSync(join(dir, 'manifest.json')));
const loadMs = performance.now() - t0;
const reqs = readFileSync(queries, 'utf8').split('\n').filter((l) => l.trim());
// RECALL_API=object times `search` (request and response as JS objects, the
// dashboard's call) instead of `searchJson` (JSON text, the native bytes).
const objects = reqs.map((r) => JSON.parse(r));
const run = process.env.RECALL_API === 'object' ? (j) => index.search(objects[j]) : process.env.RECALL_API === 'parse' ? (j) => JSON.parse(index.searchJson(reqs[j])) : (j) => index.searchJson(reqs[j]);
reqs.forEach((_, j) => run(j));
const times = [];
const each = reqs.map(() => []);
for (let i = 0; i < Number(rounds); i += 1) {
  reqs.forEach((_, j) => {
    const t = performance.now();
    run(j);
    const ms = performance.now() - t;
    times.push(ms);
    each[j].push(ms);
  });
}
const perRequest = each.map((v) => v.sort((a, b) => a - b)[Math.floor(v.length / 2)]);
times.sort((a, b) => a - b);
const at = (p) => times[Math.round((times.length - 1) * p)];
const mean = times.reduce((a, b) => a + b, 0) / times.length;
console.log(JSON.stringify({ searches: times.length, p50_ms: at(0.5), p95_ms: at(0.95), mean_ms: mean, load_ms: loadMs, per_request_p50_ms: perRequest }));
