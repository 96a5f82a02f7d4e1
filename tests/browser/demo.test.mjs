// What the page says about what it serves: a banner when it is the bundled
// demo, and on an empty index each agent directory that was looked in and
// how to point recall at another.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { tempDir, serve, launch, openPage, cleanup } from './lib/env.mjs';
import { assertNotBlank } from './lib/shots.mjs';

const dirs = [];
const servers = [];
let browser;

after(async () => {
  await browser?.close();
  for (const s of servers) await s.stop();
  for (const d of dirs) cleanup(d);
});

async function browserOnce() {
  browser = browser || (await launch());
  return browser;
}

test('the bundled demo says so in a banner', { timeout: 120_000 }, async () => {
  const dir = tempDir();
  dirs.push(dir);
  const server = await serve(null, { argv: ['--retention-days', '0', 'demo', '--dir', join(dir, 'demo')] });
  servers.push(server);
  const status = await (await fetch(`${server.url}/api/index/status`)).json();
  assert.equal(status.demo, true);
  const page = await openPage(await browserOnce(), server.url);
  await page.waitForSelector('#demo-banner:not([hidden])');
  assert.match(await page.textContent('#demo-banner'), /bundled demo/);
  await page.waitForSelector('.recent .session-row');
  await assertNotBlank(page, 'the demo home page');
  await page.close();
});

test('an empty index lists the directories looked in and how to use another', { timeout: 120_000 }, async () => {
  const dir = tempDir();
  dirs.push(dir);
  const home = join(dir, 'empty-home');
  mkdirSync(join(home, '.codex'), { recursive: true });
  const server = await serve(home, { argv: ['--home', home, 'serve', '--no-demo'] });
  servers.push(server);
  const status = await (await fetch(`${server.url}/api/index/status`)).json();
  assert.equal(status.demo, false);
  assert.equal(status.sessions, 0);
  const page = await openPage(await browserOnce(), server.url);
  await page.waitForSelector('.empty-state .roots li');
  assert.equal(await page.isHidden('#demo-banner'), true);
  const rows = await page.$$eval('.empty-state .roots li', (l) => l.map((li) => li.textContent));
  for (const r of status.roots) {
    assert.ok(rows.some((t) => t.includes(r.dir) && t.includes(r.source)), `${r.dir} is listed`);
  }
  assert.ok(rows.some((t) => t.includes(join(home, '.codex')) && t.includes('exists')));
  assert.ok(rows.some((t) => t.includes(join(home, '.claude', 'projects')) && t.includes('not found')));
  const text = await page.textContent('.empty-state');
  assert.match(text, /recall --home DIR serve/);
  assert.match(text, /CLAUDE_CONFIG_DIR/);
  await assertNotBlank(page, 'the empty state');
  await page.close();
});
