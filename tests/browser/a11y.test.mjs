// Accessibility: axe-core (tests/browser/node_modules/axe-core) on the home,
// search, session, settings and offline views, on a phone (390 × 844) and a
// desktop (1280 × 800), in the light and the dark theme, failing on any
// serious or critical violation; and a keyboard-only walk from load to
// reading a hit (skip link, one tab stop for the activity chart with arrow
// keys, Enter opens, focus moves into the session and returns on Escape).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { tempDir, serve, launch, openPage, cleanup } from './lib/env.mjs';
import { VIEWPORTS, viewportOptions, assertAccessible } from './lib/axe.mjs';

const LONG = { timeout: 300_000 };
const QUERY = 'tide';
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

for (const vp of VIEWPORTS) {
  for (const colorScheme of ['light', 'dark']) {
    test(`axe-core: no serious or critical violation on any view (${vp.name}, ${colorScheme})`, LONG, async () => {
      const context = await browser.newContext(viewportOptions(vp, { colorScheme }));
      const page = await openPage(browser, server.url, { context });
      await page.waitForSelector('.recent .session-row');
      await page.waitForSelector('.activity-chart');
      await assertAccessible(page, 'home');

      await page.fill('#q', QUERY);
      await page.waitForSelector('.session-card .hit');
      await assertAccessible(page, 'search');

      await page.click('.session-card .hit');
      await page.waitForSelector('#session .entry.located');
      await assertAccessible(page, 'session');
      // A session with code blocks (Markdown, highlighted) and tool rows.
      await page.keyboard.press('Escape');
      await page.waitForSelector('#session', { state: 'hidden' });
      if (vp.mobile) await page.click('#filters-btn');
      await page.selectOption('#filters select[name=scope]', 'all');
      await assertAccessible(page, 'filters');
      if (vp.mobile) await page.click('#filters-btn');
      await page.fill('#q', 'fn');
      await page.waitForSelector('.session-card .hit');
      await page.click('.session-card .hit');
      await page.waitForSelector('#session .entry.located');
      await assertAccessible(page, 'session with code and tools');
      await page.keyboard.press('Escape');
      await page.waitForSelector('#session', { state: 'hidden' });

      if (vp.mobile) await page.click('#menu-btn');
      await page.click('#settings-btn');
      await page.waitForSelector('#settings[open] h2');
      await assertAccessible(page, 'settings');
      await page.keyboard.press('Escape');

      if (vp.mobile) await page.click('#menu-btn');
      await page.click('#offline-btn');
      await page.waitForSelector('#mode-badge:not([hidden])', { timeout: 120_000 });
      await page.fill('#q', QUERY);
      await page.waitForSelector('.session-card .hit');
      await assertAccessible(page, 'offline search');
      assert.deepEqual(page.errors, []);
      await context.close();
    });
  }
}

test('the page has one h1, a skip link first, and unique landmarks', LONG, async () => {
  const context = await browser.newContext(viewportOptions(VIEWPORTS[1]));
  const page = await openPage(browser, server.url, { context });
  await page.waitForSelector('.recent .session-row');
  assert.equal(await page.locator('h1').count(), 1);
  const first = await page.evaluate(() => document.querySelector('body a, body button, body input')?.className);
  assert.equal(first, 'skip');
  await context.close();
});

test('keyboard only: from load to reading a hit, and back', LONG, async () => {
  const context = await browser.newContext(viewportOptions(VIEWPORTS[1]));
  const page = await openPage(browser, server.url, { context });
  await page.waitForSelector('.recent .session-row');
  await page.waitForSelector('.activity-chart');
  const focused = () => page.evaluate(() => {
    const a = document.activeElement;
    return { tag: a?.tagName.toLowerCase(), id: a?.id || '', cls: String(a?.className?.baseVal ?? a?.className ?? ''), text: (a?.textContent || '').trim().slice(0, 40), role: a?.getAttribute('role') || '' };
  });
  // The search box has focus on load; Shift-Tab reaches the skip link first in the page.
  assert.equal((await focused()).id, 'q');
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Shift+Tab');
  assert.equal((await focused()).cls, 'skip');
  assert.ok(await page.evaluate(() => document.activeElement.getBoundingClientRect().top >= 0), 'the skip link shows when focused');
  await page.keyboard.press('Enter');
  assert.equal((await focused()).id, 'results', 'the skip link moves focus to the results');

  // The activity chart is one tab stop: Tab from the results goes past it in one press.
  const stops = [];
  for (let i = 0; i < 12; i += 1) {
    await page.keyboard.press('Tab');
    stops.push(await focused());
  }
  const chartStops = stops.filter((s) => s.role === 'slider');
  assert.equal(chartStops.length, 1, `one tab stop for the chart: ${JSON.stringify(stops)}`);
  assert.equal(await page.locator('.activity-chart [tabindex]').count(), 0, 'no day is a tab stop');
  // Arrow keys move between days; Enter filters to the day.
  await page.focus('.activity-chart');
  const v0 = await page.getAttribute('.activity-chart', 'aria-valuetext');
  await page.keyboard.press('Home');
  const v1 = await page.getAttribute('.activity-chart', 'aria-valuetext');
  assert.notEqual(v0, v1);
  await page.keyboard.press('ArrowRight');
  assert.notEqual(await page.getAttribute('.activity-chart', 'aria-valuetext'), v1);
  await page.keyboard.press('End');
  // The last day of the window has sessions in the demo.
  const day = (await page.getAttribute('.activity-chart', 'aria-valuetext')).slice(0, 10);
  await page.keyboard.press('Enter');
  await page.waitForFunction((d) => new URL(location.href).searchParams.get('since') === d, day);
  await page.goBack();
  await page.waitForFunction(() => !new URL(location.href).searchParams.get('since'));

  // Search, then reach the first hit with the keyboard and open it.
  await page.focus('#q');
  await page.keyboard.type(QUERY);
  await page.waitForSelector('.session-card .hit');
  await page.keyboard.press('ArrowDown');
  const hit = await focused();
  assert.match(hit.cls, /\bhit\b/);
  const hitKey = await page.evaluate(() => document.activeElement.dataset.key);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#session .entry.located');
  await page.waitForFunction(() => document.getElementById('session').contains(document.activeElement));
  const inside = await page.evaluate(() => {
    const a = document.activeElement;
    const r = a.getBoundingClientRect();
    return { located: a.classList.contains('located'), top: r.top, vh: innerHeight };
  });
  assert.ok(inside.located, 'focus is on the hit in the session');
  assert.ok(inside.top >= 0 && inside.top < inside.vh, 'and it is on screen');
  // Tab walks the panel's controls, Escape closes and focus returns to the hit.
  await page.keyboard.press('Escape');
  await page.waitForSelector('#session', { state: 'hidden' });
  const back = await page.evaluate(() => ({ hit: document.activeElement.classList.contains('hit'), key: document.activeElement.dataset.key }));
  assert.deepEqual(back, { hit: true, key: hitKey });
  assert.deepEqual(page.errors, []);
  await context.close();
});
