// Live sessions (`GET /api/events`): a record appended to the transcript of
// the open session shows in the panel within 3 s (as text, never HTML),
// the panel keeps the reader's place unless they were at the bottom (then
// it follows), the status line moves to the new revision, and a search on
// screen offers "N new results — refresh" when a new record matches it, and
// the home page swaps in its refreshed list without blanking it first.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, makeHome, serve, launch, openPage, cleanup, XSS_KEY } from './lib/env.mjs';

const LONG = { timeout: 120_000 };
let dir;
let home;
let server;
let browser;
let transcript;
let n = 0;

before(async () => {
  dir = tempDir('recall-live-');
  home = makeHome(dir, { sessions: 8 });
  transcript = join(home, '.claude/projects/-home-mara-code-xss-lab/5e55a0c1-0000-4000-8000-00000000a001.jsonl');
  server = await serve(home);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  cleanup(dir);
});

/** Appends one user record saying `text` to the open transcript. */
function appendRecord(text) {
  n += 1;
  const lines = readFileSync(transcript, 'utf8').trim().split('\n');
  const last = JSON.parse(lines[lines.length - 1]);
  const uuid = `7a1f0c2e-0000-4000-8000-${String(900000000000 + n)}`;
  const rec = {
    type: 'user',
    uuid,
    parentUuid: last.uuid,
    sessionId: last.sessionId,
    cwd: last.cwd,
    gitBranch: 'main',
    version: '2.1.39',
    message: { role: 'user', content: text },
    timestamp: new Date(Date.parse('2026-10-20T12:00:00.000Z') + n * 1000).toISOString(),
  };
  appendFileSync(transcript, `${JSON.stringify(rec)}\n`);
}

const panelText = (page) => page.textContent('#session .entries');

test('an appended record shows in the open session within 3 s, as text', LONG, async () => {
  const page = await openPage(browser, `${server.url}/?session=${encodeURIComponent(XSS_KEY)}`);
  await page.waitForSelector('#session .entry');
  await page.waitForFunction(() => /revision \d+/.test(document.querySelector('#index-status')?.textContent || ''));
  const revBefore = Number((await page.textContent('#index-status')).match(/revision (\d+)/)[1]);
  const before = await page.locator('#session .entry').count();
  // Give the page a moment to open its event stream.
  await page.waitForTimeout(500);

  const t0 = Date.now();
  appendRecord('livecanary one <b class="injected">not bold</b>');
  await page.waitForFunction(() => (document.querySelector('#session .entries')?.textContent || '').includes('livecanary one'), null, { timeout: 3000 });
  const took = Date.now() - t0;
  assert.ok(took < 3000, `shown after ${took} ms`);
  assert.equal(await page.locator('#session .entry').count(), before + 1);
  assert.ok((await panelText(page)).includes('<b class="injected">not bold</b>'), 'the markup is shown as text');
  assert.equal(await page.locator('#session b.injected').count(), 0, 'no element was made from the transcript');
  // The status line follows.
  await page.waitForFunction((r) => {
    const m = (document.querySelector('#index-status')?.textContent || '').match(/revision (\d+)/);
    return m && Number(m[1]) > r;
  }, revBefore, { timeout: 3000 });
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the panel keeps the reader\'s place, or follows from the bottom', LONG, async () => {
  const page = await openPage(browser);
  await page.setViewportSize({ width: 1280, height: 420 });
  await page.goto(`${server.url}/?session=${encodeURIComponent(XSS_KEY)}`);
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
  await page.waitForSelector('#session .entry');
  await page.waitForTimeout(500);
  const scrollable = await page.evaluate(() => {
    const s = document.querySelector('#session');
    return s.scrollHeight > s.clientHeight + 40;
  });
  assert.ok(scrollable, 'the panel scrolls at this height');

  // Read at the top: the new record is appended below, the place is kept.
  await page.evaluate(() => { document.querySelector('#session').scrollTop = 0; });
  appendRecord('livecanary two');
  await page.waitForFunction(() => document.querySelector('#session .entries').textContent.includes('livecanary two'), null, { timeout: 3000 });
  assert.equal(await page.evaluate(() => document.querySelector('#session').scrollTop), 0);

  // At the bottom: the panel follows the new record.
  await page.evaluate(() => { const s = document.querySelector('#session'); s.scrollTop = s.scrollHeight; });
  appendRecord('livecanary three');
  await page.waitForFunction(() => document.querySelector('#session .entries').textContent.includes('livecanary three'), null, { timeout: 3000 });
  const gap = await page.evaluate(() => { const s = document.querySelector('#session'); return s.scrollHeight - s.scrollTop - s.clientHeight; });
  assert.ok(gap < 40, `still at the bottom (${gap} px left)`);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a search on screen offers the new results', LONG, async () => {
  const page = await openPage(browser, server.url);
  await page.waitForTimeout(500);
  await page.fill('#q', 'zebracanary');
  await page.waitForSelector('#hits .empty');
  appendRecord('the zebracanary has arrived');
  const button = page.locator('.live-note button');
  await button.waitFor({ timeout: 5000 });
  assert.equal((await button.textContent()).trim(), '1 new result — refresh');
  await button.click();
  await page.waitForSelector('#hits .hit');
  assert.equal(await page.locator('.live-note button').count(), 0);
  assert.ok((await page.textContent('#hits')).includes('zebracanary'));
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the home page follows the index without blanking the list under the reader', LONG, async () => {
  const page = await openPage(browser, server.url);
  await page.waitForSelector('.home-box:not([aria-busy]) .recent .session-row');
  // From here on: did a busy (empty) home box ever reach the page, and how
  // many home pages were swapped in?
  await page.evaluate(() => {
    window.__blanked = false;
    window.__homes = 0;
    document.addEventListener('recall:home', () => { window.__homes += 1; });
    new MutationObserver(() => {
      if (document.querySelector('.home-box[aria-busy]')) window.__blanked = true;
    }).observe(document.body, { subtree: true, childList: true, attributes: true });
  });
  const rows = await page.locator('.recent .session-row').count();
  appendRecord('the home page moves with the index');
  await page.waitForFunction(() => window.__homes > 0, null, { timeout: 10_000 });
  assert.equal(await page.evaluate(() => window.__blanked), false, 'a background refresh showed an empty box');
  assert.equal(await page.locator('.home-box[aria-busy]').count(), 0);
  assert.equal(await page.locator('.recent .session-row').count(), rows);
  assert.deepEqual(page.errors, []);
  await page.close();
});
