// A page of results that stops before an oversized shard with nothing found
// (issue 24 item 21) is continued by the dashboard itself: it follows the
// cursor until a hit or the end, with no "More results" click. The daemon's
// first pages are replaced by empty ones with a cursor (as a scan stopped at
// a 64 MB shard answers); the last request goes to the real daemon.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { tempDir, serve, launch, openPage, cleanup } from './lib/env.mjs';

const LONG = { timeout: 120_000 };
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

const empty = (cursor) => ({ ok: true, state: 'partial', partial_reason: 'budget', revision: 1, sessions: [], cursor, coverage: {} });

/** Routes the search: `pages` empty answers first, then the daemon (or, with `end`, an empty last page). */
async function stub(page, pages, { end = false } = {}) {
  const seen = [];
  await page.route('**/api/sessions/message-search?*', async (route) => {
    const u = new URL(route.request().url());
    if (u.searchParams.get('q') !== 'tide') return route.continue();
    const n = Number((u.searchParams.get('cursor') || 'c0').slice(1));
    seen.push(n);
    if (n < pages) return route.fulfill({ json: empty(`c${n + 1}`) });
    if (end) return route.fulfill({ json: { ...empty(null), state: 'ready', partial_reason: null } });
    u.searchParams.delete('cursor');
    return route.continue({ url: u.href });
  });
  return seen;
}

test('empty pages with a cursor are followed until a hit', LONG, async () => {
  const page = await openPage(browser, server.url);
  const seen = await stub(page, 3);
  await page.fill('#q', 'tide');
  await page.waitForSelector('.session-card .hit', { timeout: 20_000 });
  assert.deepEqual(seen, [0, 1, 2, 3], 'three empty pages followed, then the hits');
  assert.equal(await page.locator('.more').count() <= 1, true);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('empty pages followed to the end say nothing matches', LONG, async () => {
  const page = await openPage(browser, server.url);
  const seen = await stub(page, 4, { end: true });
  await page.fill('#q', 'tide');
  await page.waitForSelector('#hits .empty', { timeout: 20_000 });
  assert.equal((await page.textContent('#hits .empty')).trim(), 'No conversation matches.');
  assert.deepEqual(seen, [0, 1, 2, 3, 4]);
  assert.equal(await page.locator('.more').count(), 0, 'no More button at the end');
  await page.context().close();
});
