// "Search the full logs" against the real `recall serve`: the dashboard's
// Deep Search streams what the daemon's NDJSON route finds (the same
// sessions and lines), renders transcript text as text, opens an indexed
// line's session at it, passes axe-core and fits a 390 px phone.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDir, makeHome, serve, warm, launch, openPage, cleanup } from './lib/env.mjs';
import { assertAccessible } from './lib/axe.mjs';

let dir;
let server;
let browser;

before(async () => {
  dir = tempDir();
  const home = makeHome(dir, { sessions: 30, seed: 3 });
  server = await serve(home);
  await warm(server.url);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  cleanup(dir);
});

/** The daemon's own answer: the NDJSON lines of one deep search. */
async function deepLines(params) {
  const res = await fetch(`${server.url}/api/sessions/deep-search?${new URLSearchParams(params)}`);
  assert.equal(res.status, 200);
  return (await res.text()).split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
}

async function searchFullLogs(page, q) {
  await page.fill('#q', q);
  // This query's own button, not the last one's.
  await page.waitForFunction((want) => document.querySelector('.deep-btn')?.textContent.includes(`“${want}”`), q);
  await page.click('.deep-btn');
  await page.waitForFunction(() => /matching line|No line|failed/.test(document.querySelector('#deep .deep-status, #deep .error')?.textContent || ''));
}

test('Search the full logs shows what Deep Search finds, as text, and opens a hit', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  await searchFullLogs(page, 'xsscanary');
  const lines = await deepLines({ pattern: 'xsscanary', fixed_strings: 'true', ignore_case: 'true', max_results: '200' });
  const sessions = lines.filter((l) => l.type === 'session').map((l) => l.session);
  assert.ok(sessions.length >= 1, JSON.stringify(lines.at(-1)));
  const shown = await page.$$eval('#deep .deep-session', (s) => s.length);
  const hits = await page.$$eval('#deep .deep-hit', (s) => s.length);
  assert.equal(shown, sessions.length);
  assert.equal(hits, sessions.reduce((n, s) => n + s.hits.length, 0));
  const marks = await page.$$eval('#deep mark', (m) => m.map((x) => x.textContent.toLowerCase()));
  assert.ok(marks.length >= hits && marks.every((m) => m === 'xsscanary'), JSON.stringify(marks));
  // The planted transcript's markup is shown, never built.
  const text = await page.textContent('#deep');
  assert.ok(text.includes('<img src=x onerror=alert(1)>') || text.includes('<script>'), text.slice(0, 400));
  assert.equal(await page.evaluate(() => document.querySelectorAll('#deep img, #deep script, #deep svg, #deep b').length), 0);
  await assertAccessible(page, 'the full-log results');
  // An indexed line opens its session at that record.
  await page.click('#deep button.deep-hit');
  await page.waitForSelector('#session .entry');
  assert.equal(await page.isVisible('#session'), true);
  await page.waitForTimeout(200);
  assert.deepEqual(page.dialogs, []);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a deep search with nothing found says so, and the panel fits a 390 px phone', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  await page.setViewportSize({ width: 390, height: 844 });
  await searchFullLogs(page, 'zq9xv7 nothing here');
  assert.match(await page.textContent('#deep .deep-status'), /No line of the \d+ files scanned matches/);
  await searchFullLogs(page, 'the');
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 390, `the page is ${width} px wide`);
  // A new message search clears the panel.
  await page.fill('#q', 'error');
  await page.waitForFunction(() => document.getElementById('deep').hidden);
  await page.close();
});
