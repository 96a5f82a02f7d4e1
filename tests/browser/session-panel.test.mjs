// The session panel's "find in this session" box (the core's one-session
// search: marks on the hits, next/previous, wrapping) and its "current
// surface only" toggle (the core's active records), online, in a report
// (wasm, file://) and on the demo's DeepSeek Harness session. Every count the
// page shows is checked against the daemon's one-session routes.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tempDir, makeHome, serve, warm, recall, launch, newContext, openPage, cleanup } from './lib/env.mjs';

const LONG = { timeout: 300_000 };
let dir;
let home;
let server;
let browser;
let findCase;
let surfaceCase;

async function api(base, path, params = {}) {
  const qs = new URLSearchParams(params).toString();
  return (await fetch(`${base}${path}${qs ? `?${qs}` : ''}`)).json();
}

const words = (text) => (text || '').split(/[^\p{L}\p{N}]+/u).filter((w) => /^[a-z]{6,}$/.test(w));

/** A session and a word found in 3+ of its conversation records. */
async function pickFind(base, keys) {
  for (const key of keys) {
    const k = encodeURIComponent(key);
    const page = await api(base, `/api/session/${k}`, { limit: '500' });
    for (const e of page.entries) {
      for (const w of words(e.text).slice(0, 3)) {
        const res = await api(base, `/api/session/${k}/search`, { q: w, limit: '500' });
        if (res.total_hits >= 3 && res.total_hits <= 100) return { key, word: w, hits: res.hits };
      }
    }
  }
  throw new Error('no session has a word in 3 records');
}

/** A session whose conversation has superseded records. */
async function pickSurface(base, keys) {
  for (const key of keys) {
    const k = encodeURIComponent(key);
    const all = await api(base, `/api/session/${k}`, { limit: '1' });
    const active = await api(base, `/api/session/${k}/filter`, { state: 'active', role: 'user,assistant', limit: '1' });
    if (active.total < all.total) return { key, total: all.total, active: active.total };
  }
  throw new Error('no session has superseded conversation records');
}

before(async () => {
  dir = tempDir('recall-panel-');
  home = makeHome(dir, { sessions: 40 });
  server = await serve(home);
  await warm(server.url);
  const manifest = await api(server.url, '/api/index/manifest');
  const keys = Object.keys(manifest.sessions);
  findCase = await pickFind(server.url, keys);
  surfaceCase = await pickSurface(server.url, keys);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  cleanup(dir);
});

const count = (page) => page.textContent('#session .find-count');
const current = (page) => page.getAttribute('#session .entry.find-current', 'data-record');

/** Types the word, steps through the hits and back, checking every step. */
async function exerciseFind(page, { word, hits }) {
  await page.fill('#find-q', word);
  await page.press('#find-q', 'Enter');
  const n = hits.length;
  await page.waitForFunction((want) => document.querySelector('#session .find-count')?.textContent === want, `1 of ${n}`);
  assert.equal(await current(page), String(hits[0].index));
  const marks = await page.$$eval('#session .entry.find-current mark', (m) => m.map((x) => x.textContent.toLowerCase()));
  assert.ok(marks.length > 0 && marks.every((m) => m === word), `marks ${JSON.stringify(marks)}`);
  await page.click('#session .find-next');
  await page.waitForFunction((want) => document.querySelector('#session .find-count')?.textContent === want, `2 of ${n}`);
  assert.equal(await current(page), String(hits[1].index));
  await page.press('#find-q', 'Enter');
  await page.waitForFunction((want) => document.querySelector('#session .find-count')?.textContent === want, `3 of ${n}`);
  assert.equal(await current(page), String(hits[2].index));
  await page.click('#session .find-prev');
  await page.click('#session .find-prev');
  await page.click('#session .find-prev');
  await page.waitForFunction((want) => document.querySelector('#session .find-count')?.textContent === want, `${n} of ${n}`);
  assert.equal(await current(page), String(hits[n - 1].index), 'previous wraps to the last hit');
  await page.fill('#find-q', 'zzqqxxnotaword');
  await page.press('#find-q', 'Enter');
  await page.waitForFunction(() => document.querySelector('#session .find-count')?.textContent === 'No matches');
  assert.equal(await page.$$eval('#session .entry.find-hit', (e) => e.length), 0);
}

/** Turns the surface toggle on and off, checking the listing each time. */
async function exerciseSurface(page, { total, active }) {
  const pager = () => page.textContent('#session .pager span');
  assert.match(await pager(), new RegExp(`^Entries 1–\\d+ of ${total}$`));
  await page.check('#surface-only');
  await page.waitForFunction((n) => new RegExp(`^Surface entries 1–\\d+ of ${n}$`).test(document.querySelector('#session .pager span')?.textContent || ''), active);
  const badges = await page.$$eval('#session .entry', (es) => es.filter((e) => /superseded/.test(e.querySelector('header')?.textContent || '')).length);
  assert.equal(badges, 0, 'no superseded entry on the surface');
  await page.uncheck('#surface-only');
  await page.waitForFunction((n) => new RegExp(`^Entries 1–\\d+ of ${n}$`).test(document.querySelector('#session .pager span')?.textContent || ''), total);
}

test('find in this session: marks, next and previous, online', LONG, async () => {
  const page = await openPage(browser, `${server.url}/?session=${encodeURIComponent(findCase.key)}`);
  await page.waitForSelector('#session .entry');
  await exerciseFind(page, findCase);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('current surface only lists the active records, online', LONG, async () => {
  const page = await openPage(browser, `${server.url}/?session=${encodeURIComponent(surfaceCase.key)}`);
  await page.waitForSelector('#session .entry');
  await exerciseSurface(page, surfaceCase);
  // With the surface on, find searches only the records that still stand.
  const k = encodeURIComponent(surfaceCase.key);
  const gone = await api(server.url, `/api/session/${k}/filter`, { state: 'superseded', role: 'user,assistant' });
  const w = gone.entries.flatMap((e) => words(e.text))[0];
  assert.ok(w, 'a superseded record has a word to find');
  const everywhere = await api(server.url, `/api/session/${k}/search`, { q: w, limit: '500' });
  const standing = await api(server.url, `/api/session/${k}/search`, { q: w, state: 'active', limit: '500' });
  assert.ok(standing.total_hits < everywhere.total_hits);
  const said = (n) => (n ? `1 of ${n}` : 'No matches');
  await page.fill('#find-q', w);
  await page.press('#find-q', 'Enter');
  await page.waitForFunction((want) => document.querySelector('#session .find-count')?.textContent === want, said(everywhere.total_hits));
  await page.check('#surface-only');
  await page.waitForFunction((want) => document.querySelector('#session .find-count')?.textContent === want, said(standing.total_hits));
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('find and the surface toggle work the same in a report (wasm, file://)', LONG, async () => {
  const out = join(dir, 'panel.html');
  recall(['--home', home, '--retention-days', '0', 'report', '--no-refresh', findCase.key, surfaceCase.key, '-o', out]);
  const page = await openPage(browser, null);
  const network = [];
  page.on('request', (r) => {
    if (!/^(file|blob|data):/.test(r.url())) network.push(r.url());
  });
  await page.goto(pathToFileURL(out).href);
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
  await page.click(`.session-card[data-key="${findCase.key}"] .title`);
  await page.waitForSelector('#session .entry');
  await exerciseFind(page, findCase);
  await page.click(`.session-card[data-key="${surfaceCase.key}"] .title`);
  await page.waitForFunction((k) => document.querySelector('#session .session-meta .key')?.textContent === k, surfaceCase.key);
  await exerciseSurface(page, surfaceCase);
  assert.deepEqual(network, [], 'no network requests');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('find and the surface toggle work the same offline (wasm in the worker)', LONG, async () => {
  const context = await newContext(browser);
  const page = await openPage(browser, server.url, { context });
  await page.click('#offline-btn');
  await page.waitForSelector('#mode-badge:not([hidden])');
  const asked = [];
  page.on('request', (r) => {
    if (new URL(r.url()).pathname.startsWith('/api/session/')) asked.push(r.url());
  });
  await page.goto(`${server.url}/?session=${encodeURIComponent(findCase.key)}`);
  await page.waitForSelector('#mode-badge:not([hidden])');
  await page.waitForSelector('#session .entry');
  await exerciseFind(page, findCase);
  await page.goto(`${server.url}/?session=${encodeURIComponent(surfaceCase.key)}`);
  await page.waitForSelector('#mode-badge:not([hidden])');
  await page.waitForSelector('#session .entry');
  await exerciseSurface(page, surfaceCase);
  assert.deepEqual(asked, [], 'offline, the session panel asks the daemon nothing');
  assert.deepEqual(page.errors, []);
  await page.close();
  await context.close();
});

test('the demo DeepSeek Harness session: find and surface', LONG, async () => {
  const demoDir = join(dir, 'demo');
  const demo = await serve(null, { argv: ['--retention-days', '0', 'demo', '--dir', demoDir] });
  try {
    const list = await api(demo.url, '/api/sessions', { source: 'dsh' });
    assert.equal(list.total, 1, 'the demo has one DeepSeek Harness session');
    const key = list.sessions[0].session_key;
    const k = encodeURIComponent(key);
    const all = await api(demo.url, `/api/session/${k}`, { limit: '1' });
    const active = await api(demo.url, `/api/session/${k}/filter`, { state: 'active', role: 'user,assistant', limit: '1' });
    const word = 'tide';
    const res = await api(demo.url, `/api/session/${k}/search`, { q: word });
    assert.ok(res.total_hits >= 1, 'the DSH session talks about tides');
    const page = await openPage(browser, `${demo.url}/?session=${k}`);
    await page.waitForSelector('#session .entry');
    assert.match(await page.textContent('#session .badges'), /dsh|DeepSeek/i);
    await page.fill('#find-q', word);
    await page.press('#find-q', 'Enter');
    await page.waitForFunction((want) => document.querySelector('#session .find-count')?.textContent === want, `1 of ${res.hits.length}`);
    assert.equal(await current(page), String(res.hits[0].index));
    assert.ok((await page.$$eval('#session .entry.find-current mark', (m) => m.length)) > 0);
    await page.fill('#find-q', '');
    await page.press('#find-q', 'Enter');
    await exerciseSurface(page, { total: all.total, active: active.total });
    assert.deepEqual(page.errors, []);
    await page.close();
  } finally {
    await demo.stop();
  }
});
