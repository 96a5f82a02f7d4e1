// Team search in the dashboard (issue #17): a real SeaweedFS started here,
// two generated homes published to it with `recall publish`, and a third
// served with `recall serve --remote s3://…`. The dashboard shows the host of
// every result, offers a host picker fed by the answers' `hosts` block that
// sends `host=` (and keeps paging by cursor inside it), and lists a host
// whose catalog is gone as unavailable with its reason.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, makeHome, serve, warm, launch, openPage, cleanup, BIN } from './lib/env.mjs';
import { startWeed } from './lib/weed.mjs';

const BUCKET = 'recall-web-team';
const URL_S3 = `s3://${BUCKET}/t1`;

let dir;
let weed;
let server;
let browser;
/** host name → id, from the daemon's `hosts` block. */
const ids = {};

function cli(home, args) {
  return execFileSync(BIN, ['--home', home, '--retention-days', '0', ...args], {
    encoding: 'utf8', env: { ...process.env, ...weed.env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
}

before(async () => {
  dir = tempDir('recall-team-');
  weed = await startWeed(dir, BUCKET);
  for (const [seed, name] of [[2, 'beta'], [3, 'gamma']]) {
    const sub = join(dir, name);
    mkdirSync(sub);
    const home = makeHome(sub, { sessions: 25, seed });
    cli(home, ['index']);
    cli(home, ['publish', URL_S3, '--host-name', name]);
  }
  const sub = join(dir, 'alpha');
  mkdirSync(sub);
  const home = makeHome(sub, { sessions: 25, seed: 1 });
  cli(home, ['index']);
  cli(home, ['publish', URL_S3, '--host-name', 'alpha']);
  Object.assign(process.env, weed.env); // the daemon reads the bucket with them
  server = await serve(home, { argv: ['--home', home, '--retention-days', '0', 'serve', '--remote', URL_S3] });
  await warm(server.url);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  await weed?.stop();
  cleanup(dir);
});

async function api(params) {
  const qs = new URLSearchParams(params).toString();
  return (await fetch(`${server.url}/api/sessions/message-search?${qs}`)).json();
}

async function waitResults(page) {
  await page.waitForFunction(() => {
    const r = document.getElementById('results');
    return r.getAttribute('aria-busy') !== 'true' && (r.querySelector('.session-card, .empty') || document.querySelector('#note .error'));
  });
  await page.waitForTimeout(300);
  await page.waitForFunction(() => document.getElementById('results').getAttribute('aria-busy') !== 'true');
}

function cards(page) {
  return page.$$eval('.session-card', (list) => list.map((c) => ({
    key: c.dataset.key,
    host: c.dataset.host || null,
    badge: c.querySelector('header .badge.host')?.textContent ?? null,
    hitHosts: [...c.querySelectorAll('.hit')].map((x) => x.dataset.host || null),
  })));
}

/** Every page of an API search (cursor to the end): the session keys in order. */
async function allKeys(params) {
  const keys = [];
  let cursor;
  for (let i = 0; i < 50; i += 1) {
    const r = await api({ ...params, ...(cursor ? { cursor } : {}) });
    assert.equal(r.ok, true, JSON.stringify(r));
    keys.push(...r.sessions.map((s) => s.session_key));
    if (!r.cursor) return keys;
    cursor = r.cursor;
  }
  throw new Error('more than 50 pages');
}

test('every result shows its host; the picker lists the hosts and sends host=, paging stays inside it', { timeout: 240_000 }, async () => {
  const expected = await api({ q: 'the' });
  assert.equal(expected.ok, true);
  assert.deepEqual(expected.hosts.map((x) => x.state), ['available', 'available', 'available']);
  for (const x of expected.hosts) ids[x.name] = x.id;
  assert.deepEqual(Object.keys(ids).sort(), ['alpha', 'beta', 'gamma']);
  const seen = new Set(expected.sessions.map((s) => s.host.name));
  assert.ok(seen.size >= 2, `a common word is found on several hosts: ${[...seen]}`);

  const page = await openPage(browser, server.url);
  // Before any team answer, no host picker.
  assert.equal(await page.isVisible('select[name=host]'), false);
  await page.fill('#q', '');
  await page.type('#q', 'the', { delay: 10 });
  await waitResults(page);
  const shown = await cards(page);
  assert.deepEqual(shown.map((c) => c.key), expected.sessions.map((s) => s.session_key));
  expected.sessions.forEach((s, i) => {
    assert.equal(shown[i].host, s.host.id);
    assert.equal(shown[i].badge, s.host.name);
    assert.deepEqual(shown[i].hitHosts, s.hits.map((x) => x.host.id));
  });
  // The picker: every host by name, valued by id.
  assert.equal(await page.isVisible('select[name=host]'), true);
  const options = await page.$$eval('select[name=host] option', (os) => os.map((o) => [o.value, o.textContent]));
  assert.deepEqual(options, [['', 'all hosts'], ...['alpha', 'beta', 'gamma'].map((n) => [ids[n], n])]);

  // Pick beta: the URL and the request carry host=<id>, every card is beta's.
  const asked = [];
  page.on('request', (r) => {
    if (r.url().includes('/message-search')) asked.push(new URL(r.url()).searchParams.get('host'));
  });
  await page.selectOption('select[name=host]', ids.beta);
  await page.waitForFunction((id) => new URL(location.href).searchParams.get('host') === id, ids.beta);
  await waitResults(page);
  assert.ok(asked.includes(ids.beta), `host= sent: ${asked}`);
  // Page through to the end with "More results": the union of pages is the API's, all beta.
  const want = await allKeys({ q: 'the', host: ids.beta });
  assert.ok(want.length > 0);
  for (let i = 0; i < 50 && (await page.$('button.more')); i += 1) {
    const before = (await cards(page)).length;
    await page.click('button.more');
    await page.waitForFunction((n) => document.querySelectorAll('.session-card').length > n || !document.querySelector('button.more'), before);
    await waitResults(page);
  }
  const paged = await cards(page);
  assert.deepEqual(paged.map((c) => c.key), want);
  assert.ok(paged.every((c) => c.host === ids.beta && c.badge === 'beta'), JSON.stringify(paged.filter((c) => c.host !== ids.beta)));
  // The picker still lists every host (a filtered answer lists only beta).
  assert.equal((await page.$$('select[name=host] option')).length, 4);

  // A reload of the URL restores the filter.
  await page.reload();
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
  await waitResults(page);
  assert.equal(await page.inputValue('select[name=host]'), ids.beta);
  assert.ok((await cards(page)).every((c) => c.host === ids.beta));
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a host whose catalog is gone is shown unavailable with its reason; the others still answer', { timeout: 120_000 }, async () => {
  assert.ok(ids.gamma, 'the first test found the hosts');
  const page = await openPage(browser, `${server.url}/?q=the`);
  await waitResults(page);
  assert.equal(await page.$('.hosts-down'), null, 'every host answered');
  const del = await fetch(`${weed.s3}/${BUCKET}/t1/hosts/${ids.gamma}/catalog.json`, { method: 'DELETE' });
  assert.ok(del.ok, `delete: ${del.status}`);
  const expected = await api({ q: 'the', scope: 'all' });
  assert.equal(expected.state, 'partial');
  assert.equal(expected.partial_reason, 'hosts');
  const down = expected.hosts.filter((x) => x.state !== 'available');
  assert.deepEqual(down.map((x) => x.id), [ids.gamma]);
  assert.match(down[0].reason, /catalog/);

  // A filter change reruns the search.
  await page.selectOption('select[name=scope]', 'all');
  await page.waitForSelector('.hosts-down');
  await waitResults(page);
  const shown = await cards(page);
  assert.deepEqual(shown.map((c) => c.key), expected.sessions.map((s) => s.session_key));
  assert.ok(shown.every((c) => c.host !== ids.gamma));
  assert.match(await page.textContent('#note'), /Some hosts could not be searched/);
  const line = await page.textContent(`.hosts-down li[data-host="${ids.gamma}"]`);
  assert.equal(line, `${down[0].name || ids.gamma} is unavailable: ${down[0].reason}`);
  // The picker marks it, under the name an earlier answer gave.
  const label = await page.$eval(`select[name=host] option[value="${ids.gamma}"]`, (o) => o.textContent);
  assert.equal(label, 'gamma (unavailable)');
  assert.deepEqual(page.errors, []);
  await page.close();
});
