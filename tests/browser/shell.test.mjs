// The service worker's app shell (issue 24 item 17): the list `/sw.js` is
// served with is generated from the files embedded in the binary, so every
// file the page loads is in it; and a fresh browser profile that went
// offline reloads with the daemon stopped into a working page (no blank
// page, no failed script).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { tempDir, serve, launch, openPage, cleanup } from './lib/env.mjs';

const LONG = { timeout: 180_000 };
let dir;
let server;
let browser;

before(async () => {
  dir = tempDir();
  server = await serve(null, { argv: ['--retention-days', '0', 'demo', '--dir', join(dir, 'demo')] });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  cleanup(dir);
});

async function shellList(base) {
  const sw = await (await fetch(`${base}/sw.js`)).text();
  const m = /const SHELL = (\[[^\]]*\]);/.exec(sw);
  assert.ok(m, 'the worker names its shell');
  return new Set(JSON.parse(m[1]));
}

test('every file the dashboard loads is in the service worker shell', LONG, async () => {
  const shell = await shellList(server.url);
  const context = await browser.newContext({ serviceWorkers: 'block' });
  const loaded = new Set();
  context.on('request', (r) => {
    const u = new URL(r.url());
    if (u.origin === server.url && !u.pathname.startsWith('/api/') && u.pathname !== '/sw.js') loaded.add(u.pathname);
  });
  const page = await openPage(browser, server.url, { context });
  await page.waitForSelector('.recent .session-row');
  await page.fill('#q', 'tide');
  await page.waitForSelector('.session-card .hit');
  await page.click('.session-card .hit');
  await page.waitForSelector('#session .entry');
  await page.click('#settings-btn');
  await page.waitForSelector('#settings[open]');
  await page.keyboard.press('Escape');
  await page.click('#offline-btn');
  await page.waitForSelector('#mode-badge:not([hidden])', { timeout: 120_000 });
  await page.fill('#q', 'tidal');
  await page.waitForFunction(() => document.querySelector('#hits')?.textContent.length > 0);
  const report = await openPage(browser, `${server.url}/report.html`, { context }).catch(() => null);
  await report?.close();
  assert.ok(loaded.has('/js/settings.js') && loaded.has('/pkg/recall_core_bg.wasm'), [...loaded].join(' '));
  const missing = [...loaded].filter((p) => !shell.has(p));
  assert.deepEqual(missing, [], 'loaded but not in the shell');
  await context.close();
});

test('a fresh profile that went offline reloads with the daemon stopped', LONG, async () => {
  const d = tempDir();
  const own = await serve(null, { argv: ['--retention-days', '0', 'demo', '--dir', join(d, 'demo')] });
  try {
    const context = await browser.newContext();
    const page = await openPage(browser, own.url, { context });
    await page.evaluate(() => navigator.serviceWorker.ready);
    await page.waitForSelector('.recent .session-row');
    await page.click('#offline-btn');
    await page.waitForSelector('#mode-badge:not([hidden])', { timeout: 120_000 });
    // The copy is complete once the background fill of generations ends
    // (stopping the daemon before that leaves searches that need them).
    const fill = await page.evaluate(async () => (await import('/js/offline.js')).filled());
    assert.ok(!fill.failed, 'the background fill finished');
    await own.stop();
    const failed = [];
    page.on('requestfailed', (r) => {
      if (!new URL(r.url()).pathname.startsWith('/api/')) failed.push(`${r.url()} ${r.failure()?.errorText}`);
    });
    await page.reload();
    await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 30_000 });
    assert.deepEqual(failed, [], 'every shell file came from the cache');
    await page.waitForSelector('#mode-badge:not([hidden])');
    await page.fill('#q', 'tide');
    await page.waitForSelector('.session-card .hit');
    assert.deepEqual(page.errors, []);
    await context.close();
  } finally {
    await own.stop();
    cleanup(d);
  }
});
