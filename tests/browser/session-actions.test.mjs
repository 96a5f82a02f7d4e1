// The session panel's actions: the Export menu's links (Markdown, with
// subagents, JSON, the source ZIP, the HTML report with and without the
// subagents) all download, the report opens from file:// with the session
// (its descendants when asked), and "Forget this session"
// asks first (Cancel changes nothing), then takes the session out of the
// index: the panel closes, the home list drops it, its view answers 404.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tempDir, makeHome, serve, launch, openPage, cleanup, XSS_KEY } from './lib/env.mjs';

const LONG = { timeout: 120_000 };
let dir;
let server;
let browser;

before(async () => {
  dir = tempDir('recall-actions-');
  const home = makeHome(dir, { sessions: 8 });
  server = await serve(home);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  cleanup(dir);
});

test('the export menu links download and forget asks, then forgets', LONG, async () => {
  const page = await openPage(browser, `${server.url}/?session=${encodeURIComponent(XSS_KEY)}`);
  await page.waitForSelector('#session .entry');
  await page.click('#session .export-menu summary');
  const links = await page.$$eval('#session .export-menu a', (as) => as.map((a) => [a.textContent, a.getAttribute('href')]));
  assert.deepEqual(links.map(([t]) => t), ['Markdown', 'Markdown with subagents and tool rows', 'JSON', 'Source files (zip)', 'HTML report', 'HTML report with subagents']);
  for (const [, href] of links) {
    const res = await fetch(`${server.url}${href}`);
    assert.equal(res.status, 200, href);
    assert.match(res.headers.get('content-disposition') || '', /^attachment; filename="/, href);
    await res.arrayBuffer();
  }
  const md = await (await fetch(`${server.url}${links[0][1]}`)).text();
  assert.ok(md.startsWith('# '), md.slice(0, 80));
  assert.ok(md.includes('<img src=x onerror=alert(1)>'), 'transcript text as it is');

  // The report: one self-contained page listing the session (with its
  // descendants when asked), opened from file://.
  for (const [i, want] of [[4, [XSS_KEY]], [5, null]]) {
    const res = await fetch(`${server.url}${links[i][1]}`);
    assert.match(res.headers.get('content-type'), /^text\/html/);
    const file = join(dir, `report-${i}.html`);
    writeFileSync(file, await res.text());
    const rep = await openPage(browser, null);
    await rep.goto(pathToFileURL(file).href);
    await rep.waitForFunction(() => document.documentElement.dataset.ready);
    assert.equal(await rep.evaluate(() => document.documentElement.dataset.ready), 'true');
    const keys = await rep.$$eval('.session-card', (c) => c.map((x) => x.dataset.key));
    if (want) assert.deepEqual(keys, want);
    else assert.ok(keys.includes(XSS_KEY), keys.join(' '));
    await rep.click(`.session-card[data-key="${XSS_KEY}"] .title`);
    await rep.waitForSelector('#session .entry');
    assert.ok((await rep.textContent('#session .entries')).includes('<img src=x onerror=alert(1)>'), 'transcript text as text');
    assert.deepEqual(rep.errors, []);
    assert.deepEqual(rep.dialogs, []);
    await rep.close();
  }

  // Cancel changes nothing.
  await page.click('#session .forget');
  await page.click('#session .forget-cancel');
  assert.equal(await page.locator('#session .forget').count(), 1);
  assert.equal((await fetch(`${server.url}/api/session/${encodeURIComponent(XSS_KEY)}`)).status, 200);

  await page.click('#session .forget');
  await page.click('#session .forget-confirm');
  await page.waitForFunction(() => document.querySelector('#session').hidden);
  assert.equal((await fetch(`${server.url}/api/session/${encodeURIComponent(XSS_KEY)}`)).status, 404);
  await page.waitForSelector('.session-row');
  await page.waitForFunction((k) => ![...document.querySelectorAll('.session-row')].some((r) => r.dataset.key === k), XSS_KEY);
  assert.deepEqual(page.errors, []);
  assert.deepEqual(page.dialogs, []);
  await page.close();
});
