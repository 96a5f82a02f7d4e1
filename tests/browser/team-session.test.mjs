// The session panel under `recall serve --remote` (a real SeaweedFS): a hit
// from another host names that host in its card and in the panel header
// (with its id, since two hosts here share the name "beta"), and its Export
// menu offers only what the daemon serves from that host's published shards
// (Markdown, JSON, the HTML report; no source files, no forget), each
// without a resume command; the report opens from file:// and shows the
// session. This host's sessions keep every action, and an append to one of
// its transcripts shows in the open panel within 3 s (live events through
// `serve --remote`).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tempDir, makeHome, serve, warm, launch, openPage, cleanup, BIN, XSS_KEY } from './lib/env.mjs';
import { startWeed } from './lib/weed.mjs';

const BUCKET = 'recall-web-team-session';
const URL_S3 = `s3://${BUCKET}/t2`;
const LONG = { timeout: 240_000 };

let dir;
let weed;
let server;
let browser;
let transcript;

function cli(home, args) {
  return execFileSync(BIN, ['--home', home, '--retention-days', '0', ...args], {
    encoding: 'utf8', env: { ...process.env, ...weed.env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
}

before(async () => {
  dir = tempDir('recall-team-session-');
  weed = await startWeed(dir, BUCKET);
  // Two other hosts, both named "beta".
  for (const seed of [2, 3]) {
    const sub = join(dir, `beta${seed}`);
    mkdirSync(sub);
    const home = makeHome(sub, { sessions: 12, seed });
    cli(home, ['index']);
    cli(home, ['publish', URL_S3, '--host-name', 'beta']);
  }
  const sub = join(dir, 'alpha');
  mkdirSync(sub);
  const home = makeHome(sub, { sessions: 12, seed: 1 });
  transcript = join(home, '.claude/projects/-home-mara-code-xss-lab/5e55a0c1-0000-4000-8000-00000000a001.jsonl');
  cli(home, ['index']);
  Object.assign(process.env, weed.env); // the daemon reads the bucket with them
  server = await serve(home, { argv: ['--home', home, '--retention-days', '0', 'serve', '--remote', URL_S3, '--host-name', 'alpha'] });
  await warm(server.url);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  await weed?.stop();
  cleanup(dir);
});

async function waitResults(page) {
  await page.waitForFunction(() => {
    const r = document.getElementById('results');
    return r.getAttribute('aria-busy') !== 'true' && r.querySelector('.session-card, .empty');
  });
  await page.waitForTimeout(300);
}

test('another host\'s hit names its host in the card and the panel; its exports are what that host\'s shards give', LONG, async () => {
  const answer = await (await fetch(`${server.url}/api/sessions/message-search?q=the`)).json();
  assert.equal(answer.ok, true);
  const betas = answer.hosts.filter((x) => x.name === 'beta');
  assert.equal(betas.length, 2, JSON.stringify(answer.hosts));
  const foreign = answer.sessions.find((s) => s.session_key.includes('/') && s.host?.name === 'beta');
  assert.ok(foreign, 'a hit from another host');
  const { id } = foreign.host;
  assert.ok(foreign.session_key.startsWith(`${id}/`));

  const page = await openPage(browser, `${server.url}/?q=the`);
  await waitResults(page);
  const card = page.locator(`.session-card[data-key="${foreign.session_key}"]`);
  await card.waitFor();
  // Two hosts are called beta: the label carries the id.
  assert.equal(await card.locator('header .badge.host').textContent(), `beta (${id})`);
  assert.equal(await page.$eval('.session-card .badge.host', (b) => b.children.length), 0, 'the label is text');
  await card.locator('.hit').first().click();
  await page.waitForSelector('#session .entry');
  const head = page.locator('#session .session-head .host');
  assert.equal(await head.textContent(), `Host: beta (${id})`);
  assert.equal(await head.getAttribute('data-host'), id);
  assert.equal(await page.locator('#session .resume').count(), 0, 'no resume command');
  assert.equal(await page.locator('#session .forget').count(), 0, 'another host\'s session cannot be forgotten here');
  await page.click('#session .export-menu summary');
  const links = await page.$$eval('#session .export-menu a', (as) => as.map((a) => [a.textContent, a.getAttribute('href')]));
  assert.deepEqual(links.map(([t]) => t), ['Markdown', 'Markdown with subagents and tool rows', 'JSON', 'HTML report', 'HTML report with subagents']);
  for (const [label, href] of links) {
    const res = await fetch(`${server.url}${href}`);
    assert.equal(res.status, 200, `${label}: ${href}`);
    const body = await res.text();
    assert.ok(!body.includes('- Resume:') && !body.includes('"resume":"'), `${label}: no resume command`);
  }
  const md = await (await fetch(`${server.url}${links[0][1]}`)).text();
  assert.ok(md.startsWith('# '), md.slice(0, 80));
  const json = await (await fetch(`${server.url}${links[2][1]}`)).json();
  assert.equal(json.session_key, foreign.session_key);
  assert.deepEqual(json.host, foreign.host);
  assert.equal(json.session.resume, undefined);
  assert.ok(json.records.length > 0);

  // The report opens from file:// and shows the session, with no resume command.
  const html = await (await fetch(`${server.url}${links[3][1]}`)).text();
  const file = join(dir, 'foreign.html');
  writeFileSync(file, html);
  const rep = await openPage(browser, null);
  await rep.goto(pathToFileURL(file).href);
  await rep.waitForFunction(() => document.documentElement.dataset.ready);
  assert.equal(await rep.evaluate(() => document.documentElement.dataset.ready), 'true');
  assert.deepEqual(await rep.$$eval('.session-card', (c) => c.map((x) => x.dataset.key)), [foreign.session_key]);
  await rep.click('.session-card .title');
  await rep.waitForSelector('#session .entry');
  assert.equal(await rep.locator('#session .resume').count(), 0);
  assert.deepEqual(rep.errors, []);
  await rep.close();
  assert.deepEqual(page.errors, []);
  await page.close();
});

/** Appends one user record saying `text` to this host's XSS transcript. */
function appendRecord(text, n) {
  const lines = readFileSync(transcript, 'utf8').trim().split('\n');
  const last = JSON.parse(lines[lines.length - 1]);
  const rec = {
    type: 'user',
    uuid: `7a1f0c2e-0000-4000-8000-${String(910000000000 + n)}`,
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

test('this host\'s session keeps every action and follows its transcript live', LONG, async () => {
  const page = await openPage(browser, `${server.url}/?session=${encodeURIComponent(XSS_KEY)}`);
  await page.waitForSelector('#session .entry');
  assert.equal(await page.locator('#session .session-head .host').count(), 0, 'this host\'s session names no other host');
  await page.click('#session .export-menu summary');
  const labels = await page.$$eval('#session .export-menu a', (as) => as.map((a) => a.textContent));
  assert.deepEqual(labels, ['Markdown', 'Markdown with subagents and tool rows', 'JSON', 'Source files (zip)', 'HTML report', 'HTML report with subagents']);
  assert.equal(await page.locator('#session .forget').count(), 1);
  const report = await fetch(`${server.url}/api/session/${encodeURIComponent(XSS_KEY)}/report.html`);
  assert.equal(report.status, 200);
  assert.match(report.headers.get('content-type'), /^text\/html/);
  await report.arrayBuffer();

  const before = await page.locator('#session .entry').count();
  await page.waitForTimeout(500); // the event stream opens
  const t0 = Date.now();
  appendRecord('teamlivecanary <b class="injected">not bold</b>', 1);
  await page.waitForFunction(() => (document.querySelector('#session .entries')?.textContent || '').includes('teamlivecanary'), null, { timeout: 3000 });
  const took = Date.now() - t0;
  assert.ok(took < 3000, `shown after ${took} ms`);
  assert.equal(await page.locator('#session .entry').count(), before + 1);
  assert.equal(await page.locator('#session b.injected').count(), 0, 'no element was made from the transcript');
  assert.deepEqual(page.errors, []);
  await page.close();
});
