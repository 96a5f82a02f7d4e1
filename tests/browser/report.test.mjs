// `recall report` files opened from file:// in headless Chromium with no
// server: they render, search with the same core as `recall search --json`
// (at least 100 requests compared), open further reports through the file
// picker, render transcript text as text, and stay small.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tempDir, makeHome, plantMarkdown, recall, launch, openPage, cleanup, comparable, XSS_KEY, MD_KEY } from './lib/env.mjs';
import { requestMix } from './lib/requests.mjs';
import { writeBigSession } from './lib/bigsession.mjs';

const LONG = { timeout: 300_000 };
let dir;
let home;
let keys;
let browser;
let big;

function cli(args) {
  return recall(['--home', home, '--retention-days', '0', ...args]);
}

function report(args, name) {
  const out = join(dir, name);
  cli(['report', '--no-refresh', ...args, '-o', out]);
  return out;
}

before(async () => {
  dir = tempDir('recall-report-');
  home = makeHome(dir, { sessions: 30 });
  plantMarkdown(home);
  big = writeBigSession(home);
  cli(['index']);
  // The store's keys: catalog.json names the metas holding the entries
  // (a key a meta lists as deleted is not current).
  const store = join(home, '.recall/index/v1');
  const catalog = JSON.parse(readFileSync(join(store, 'catalog.json'), 'utf8'));
  const current = new Set();
  for (const m of catalog.metas) {
    const meta = JSON.parse(readFileSync(join(store, 'metas', m.name), 'utf8'));
    for (const k of Object.keys(meta.sessions)) {
      if (!(m.deleted || []).includes(k)) current.add(k);
    }
  }
  keys = [...current].sort();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  cleanup(dir);
});

async function openReport(file) {
  const page = await openPage(browser, null);
  const failed = [];
  page.on('request', (r) => {
    if (!/^(file|blob|data):/.test(r.url())) failed.push(r.url());
  });
  await page.goto(pathToFileURL(file).href);
  await page.waitForFunction(() => document.documentElement.dataset.ready);
  assert.equal(await page.evaluate(() => document.documentElement.dataset.ready), 'true');
  page.network = failed;
  return page;
}

test('a report of many sessions renders them and their entries from file://', LONG, async () => {
  const file = report(keys, 'all.html');
  const page = await openReport(file);
  assert.equal(await page.$$eval('.session-card', (c) => c.length), keys.length);
  // The core's list order, as `recall sessions` prints it (one activity time everywhere).
  const order = JSON.parse(cli(['sessions', '--no-refresh', '--json', '--limit', '0'])).map((s) => s.session_key);
  assert.deepEqual(await page.$$eval('.session-card', (c) => c.map((x) => x.dataset.key)), order);
  await page.click('.session-card .title');
  await page.waitForSelector('#session .entry');
  assert.ok((await page.$$eval('#session .entry', (e) => e.length)) > 0);
  await page.fill('#q', 'strasse');
  await page.waitForSelector('.session-card mark');
  const marks = await page.$$eval('.session-card mark', (m) => m.map((x) => x.textContent.toLowerCase()));
  for (const m of marks) assert.match(m, /^stra(ss|ß|ẞ)e$/u);
  await page.click('.session-card .hit');
  await page.waitForSelector('#session .entry.located mark');
  assert.deepEqual(page.network, [], 'no network requests');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('at least 100 requests give the same answers in the report as recall search --json', LONG, async (t) => {
  const file = report(keys, 'parity.html');
  const page = await openReport(file);
  const requests = requestMix(120).filter((r) => r.q && r.q.trim());
  const got = await page.evaluate((reqs) => reqs.map((r) => window.recall.search(r)), requests);
  let compared = 0;
  for (let i = 0; i < requests.length; i += 1) {
    const r = requests[i];
    const flags = [];
    for (const [k, v] of Object.entries(r)) if (k !== 'q') flags.push(`--${k.replace(/_/g, '-')}`, v);
    let out;
    try {
      out = cli(['search', '--json', '--no-refresh', ...flags, '--', r.q]);
    } catch (e) {
      out = e.stdout; // exit 1 (nothing found) or 2 (error body) still print JSON
    }
    const native = JSON.parse(out);
    if (native.state === 'partial') continue;
    assert.deepEqual(comparable(got[i]), comparable(native), JSON.stringify(r));
    compared += 1;
  }
  assert.ok(compared >= 100, `compared ${compared}`);
  t.diagnostic(`${compared} of ${requests.length} answers compared equal`);
  await page.close();
});

test('a one-session report shows transcript text as text, never as HTML', LONG, async () => {
  const file = report([XSS_KEY], 'xss.html');
  const page = await openReport(file);
  assert.equal(await page.$$eval('.session-card', (c) => c.length), 1);
  const title = await page.textContent('.session-card .title');
  assert.ok(title.includes('<img src=x onerror=alert(1)>'));
  await page.click('.session-card .title');
  await page.waitForSelector('#session .entry');
  const text = await page.textContent('#session');
  assert.ok(text.includes('<script>alert(2)</script>'));
  assert.ok(text.includes('<svg/onload=alert(4)>'));
  await page.fill('#q', 'xsscanary');
  await page.waitForSelector('.session-card mark');
  const injected = await page.evaluate(() => document.querySelectorAll('main img, main script, main svg, main b').length);
  assert.equal(injected, 0);
  assert.deepEqual(page.dialogs, []);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a report renders Markdown like the dashboard, with nothing fetched and nothing injected', LONG, async () => {
  const file = report([MD_KEY], 'md.html');
  const page = await openReport(file);
  await page.click('.session-card .title');
  await page.waitForSelector('#session .entry.role-assistant .md h1');
  assert.equal(await page.textContent('#session .md h1'), 'Release notes');
  assert.ok(await page.$('#session .md pre code.hljs span.hljs-keyword'), 'highlighted code');
  const hrefs = await page.$$eval('#session .md a', (l) => l.map((a) => a.getAttribute('href')));
  assert.ok(hrefs.length > 0);
  for (const h of hrefs) assert.match(h, /^https?:\/\//);
  assert.equal(await page.$$eval('main img, main script, main iframe, main [onclick]', (l) => l.length), 0);
  assert.ok((await page.textContent('#session')).includes('<div onclick="alert(6)">html block mdcanary</div>'));
  assert.deepEqual(page.network, [], 'nothing left the file');
  assert.deepEqual(page.dialogs, []);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('further report files open through the file picker and are searched together', LONG, async () => {
  const a = report([XSS_KEY], 'a.html');
  const pick = keys.find((k) => k.startsWith('codex:'));
  const b = report([pick], 'b.html');
  const page = await openReport(a);
  await page.setInputFiles('#open-files', [b]);
  await page.waitForFunction(() => /2 reports/.test(document.getElementById('reports').textContent));
  const listed = await page.$$eval('.session-card', (c) => c.map((x) => x.dataset.key));
  assert.ok(listed.includes(XSS_KEY) && listed.includes(pick), listed.join());
  const found = await page.evaluate(() => window.recall.search({ q: 'e', limit: 100 }).sessions.map((s) => s.session_key));
  assert.ok(found.includes(XSS_KEY) && found.includes(pick));
  await page.close();
});

test('a query report holds the sessions that match it', LONG, async () => {
  const file = report(['--query', 'strasse'], 'query.html');
  const page = await openReport(file);
  const native = JSON.parse(cli(['search', '--json', '--no-refresh', '--limit', '100', 'strasse']));
  const listed = await page.evaluate(() => window.recall.sessions().sort());
  assert.deepEqual(listed, native.sessions.map((s) => s.session_key).sort());
  assert.equal(await page.inputValue('#q'), 'strasse');
  await page.close();
});

test('a session of 5 MB of transcript makes a report of at most 3 MB', LONG, async (t) => {
  assert.ok(big.bytes >= 5_000_000);
  const file = report([big.key], 'big.html');
  const size = statSync(file).size;
  t.diagnostic(`transcript ${big.bytes} bytes → report ${size} bytes`);
  assert.ok(size <= 3_000_000, `report is ${size} bytes`);
  const page = await openReport(file);
  await page.click('.session-card .title');
  await page.waitForSelector('#session .entry');
  await page.fill('#q', 'straße');
  await page.waitForSelector('.session-card mark');
  await page.close();
});
