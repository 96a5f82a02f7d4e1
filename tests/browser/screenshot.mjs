// Takes the README screenshots of the dashboard against a running
// `recall serve` (the README's are of `recall demo`):
//
//   node screenshot.mjs URL OUTDIR [query] [markdown-query]
//
// writes, for a desktop (1280 × 800) and a phone (390 × 844, touch):
//   OUTDIR/desktop-home.png      the home page
//   OUTDIR/desktop-search.png    a search with a hit opened beside the results
//   OUTDIR/desktop-markdown.png  an assistant entry rendered as Markdown (highlighted
//                                code when a hit of markdown-query has a fence, else
//                                code spans), with the panel's Export menu open
//   OUTDIR/desktop-tools.png     a session with its tool calls as cards (scope: all)
//   OUTDIR/phone-home.png, phone-search.png, phone-session.png (the hit opened full screen)
// Each is checked not to be blank; a search that finds nothing, or a
// Markdown shot without rendered code, fails the run instead of taking a
// shot of the wrong thing.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launch } from './lib/env.mjs';
import { assertNotBlank } from './lib/shots.mjs';
import { VIEWPORTS, viewportOptions } from './lib/axe.mjs';

const [url, out, query = 'tide', mdQuery = 'parse_shom'] = process.argv.slice(2);
if (!url || !out) {
  console.error('usage: node screenshot.mjs URL OUTDIR [query] [markdown-query]');
  process.exit(2);
}
mkdirSync(out, { recursive: true });
const browser = await launch();
const phone = VIEWPORTS.find((v) => v.mobile);
const desktop = VIEWPORTS.find((v) => !v.mobile);

async function open(vp) {
  const context = await browser.newContext(viewportOptions(vp, { colorScheme: 'light' }));
  const page = await context.newPage();
  page.on('pageerror', (e) => console.error('page error:', String(e)));
  await page.goto(url);
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
  await page.waitForSelector('.recent .session-row');
  await page.waitForTimeout(300);
  return page;
}

async function shot(page, name) {
  await assertNotBlank(page, name);
  await page.screenshot({ path: join(out, name) });
  console.log(`wrote ${join(out, name)}`);
}

/** Searches `q` and waits for its own answer (not the previous one) to hold hits. */
async function search(page, q) {
  await page.fill('#q', q);
  await page.waitForFunction((want) => new URL(location.href).searchParams.get('q') === want
    && document.getElementById('results').getAttribute('aria-busy') !== 'true', q);
  await page.waitForTimeout(400);
  await page.waitForFunction(() => document.getElementById('results').getAttribute('aria-busy') !== 'true');
  if (!(await page.$('.session-card .hit'))) throw new Error(`the search "${q}" found nothing to show`);
}

// Desktop.
let page = await open(desktop);
await shot(page, 'desktop-home.png');
await search(page, query);
await page.click('.session-card .hit');
await page.waitForSelector('#session .entry.located');
await page.waitForTimeout(300);
await shot(page, 'desktop-search.png');

// A hit in an assistant entry with code rendered as Markdown.
await page.selectOption('select[name="role"]', 'assistant');
await search(page, mdQuery);
// Prefer an entry with a highlighted fence; else the first with code spans.
let found = null;
const hits = (await page.$$('.session-card .hit')).slice(0, 30);
for (const [i, hit] of hits.entries()) {
  await hit.click();
  await page.waitForSelector('#session .entry.located');
  await page.waitForTimeout(150);
  if (await page.$('#session .entry.located .md pre code.hljs')) {
    found = { kind: 'fence', i };
    break;
  }
  if (!found && (await page.$('#session .entry.located .md code'))) found = { kind: 'code', i };
}
if (!found) throw new Error(`no hit of "${mdQuery}" renders code as Markdown`);
if (found.kind !== 'fence') {
  console.error('no hit with a highlighted fence: the shot shows code spans');
  await hits[found.i].click();
  await page.waitForSelector('#session .entry.located');
  await page.waitForTimeout(150);
}
await page.click('#session .export-menu summary');
await page.evaluate(() => {
  const target = document.querySelector('#session .entry.located');
  const panel = document.getElementById('session');
  const head = document.querySelector('#session .session-head')?.offsetHeight || 0;
  if (target) panel.scrollTop = Math.max(0, target.offsetTop - head - 40);
});
await page.waitForTimeout(200);
await shot(page, 'desktop-markdown.png');

// Tool cards: the session with the most kinds of card, at scope "all".
await page.selectOption('select[name="role"]', '');
await page.selectOption('select[name="scope"]', 'all');
await page.fill('#q', '');
await page.waitForSelector('.recent .session-row');
const rows = await page.$$eval('.recent .session-row', (r) => r.map((x) => x.dataset.key).filter(Boolean));
let best = null;
for (const key of rows) {
  await page.goto(`${url}/?scope=all&session=${encodeURIComponent(key)}`);
  await page.waitForSelector('#session .entry');
  await page.waitForTimeout(150);
  const kinds = await page.$$eval('#session .tool-card', (c) => new Set(c.map((x) => x.className)).size);
  if (!best || kinds > best.kinds) best = { key, kinds };
}
if (best) {
  await page.goto(`${url}/?scope=all&session=${encodeURIComponent(best.key)}`);
  await page.waitForSelector('#session .entry');
  // A command with its output below it, clear of the sticky panel header;
  // the heading loses the focus ring the open gave it.
  await page.evaluate(() => {
    const card = document.querySelector('#session .tool-card.kind-shell') || document.querySelector('#session .tool-card');
    const panel = document.getElementById('session');
    const head = document.querySelector('#session .session-head')?.offsetHeight || 0;
    if (card) panel.scrollTop = Math.max(0, card.closest('.entry').offsetTop - head - 40);
    document.activeElement?.blur();
  });
  await page.waitForTimeout(200);
  await shot(page, 'desktop-tools.png');
} else {
  console.error('no session listed: no tool-card shot');
}
await page.context().close();

// Phone.
page = await open(phone);
await shot(page, 'phone-home.png');
await search(page, query);
await shot(page, 'phone-search.png');
await page.tap('.session-card .hit');
await page.waitForSelector('#session .entry.located');
await page.waitForTimeout(300);
await shot(page, 'phone-session.png');
await page.context().close();
await browser.close();
