// Takes the README screenshots of the dashboard against a running
// `recall serve` (e.g. on a gen.py home):
//
//   node screenshot.mjs URL OUTDIR [query] [markdown-query]
//
// writes OUTDIR/dashboard-home.png (the home page), OUTDIR/dashboard.png (a
// search with a hit opened) and OUTDIR/dashboard-markdown.png (a session
// whose entry renders Markdown with highlighted code). Each is checked not
// to be blank.

import { join } from 'node:path';
import { launch, newContext } from './lib/env.mjs';
import { assertNotBlank } from './lib/shots.mjs';

const [url, out, query = 'strasse', mdQuery = 'fn'] = process.argv.slice(2);
if (!url || !out) {
  console.error('usage: node screenshot.mjs URL OUTDIR [query] [markdown-query]');
  process.exit(2);
}
const browser = await launch();
const context = await newContext(browser);
const page = await context.newPage();
await page.setViewportSize({ width: 1400, height: 860 });
page.on('pageerror', (e) => console.error('page error:', String(e)));

async function shot(name) {
  await assertNotBlank(page, name);
  await page.screenshot({ path: join(out, name) });
  console.log(`wrote ${join(out, name)}`);
}

await page.goto(url);
await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
await page.waitForSelector('.recent .session-row');
await page.waitForTimeout(300);
await shot('dashboard-home.png');

await page.fill('#q', query);
await page.waitForSelector('.session-card');
await page.waitForTimeout(400);
await page.click('.session-card .hit');
await page.waitForSelector('#session .entry.located');
await page.waitForTimeout(300);
await shot('dashboard.png');

// A hit in an assistant entry holding a fenced code block.
await page.fill('#q', mdQuery);
await page.selectOption('select[name="role"]', 'assistant');
await page.waitForSelector('.session-card');
await page.waitForTimeout(400);
const hits = await page.$$('.session-card .hit');
let found = false;
for (const hit of hits.slice(0, 30)) {
  await hit.click();
  await page.waitForSelector('#session .entry.located');
  await page.waitForTimeout(150);
  if (await page.$('#session .entry.located .md pre code.hljs')) {
    found = true;
    break;
  }
}
if (!found) console.error('no hit with highlighted code among the first results; the shot shows the last one');
await page.evaluate(() => {
  const target = document.querySelector('#session .entry.located');
  const panel = document.getElementById('session');
  if (target) panel.scrollTop = Math.max(0, target.offsetTop - 120);
});
await page.waitForTimeout(200);
await shot('dashboard-markdown.png');
await browser.close();
