// Takes the README screenshot of the dashboard: `node screenshot.mjs URL OUT.png [query]`
// against a running `recall serve` (e.g. on a gen.py home).

import { launch, newContext } from './lib/env.mjs';

const [url, out, query = 'strasse'] = process.argv.slice(2);
if (!url || !out) {
  console.error('usage: node screenshot.mjs URL OUT.png [query]');
  process.exit(2);
}
const browser = await launch();
const context = await newContext(browser);
const page = await context.newPage();
await page.setViewportSize({ width: 1400, height: 860 });
page.on('pageerror', (e) => console.error('page error:', String(e)));
await page.goto(url);
await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
await page.fill('#q', query);
await page.waitForSelector('.session-card');
await page.waitForTimeout(400);
if (process.env.OPEN_HIT !== '0') {
  await page.click('.session-card .hit');
  await page.waitForSelector('#session .entry.located');
  await page.waitForTimeout(300);
}
await page.screenshot({ path: out });
await browser.close();
