// The dashboard's settings pane (issue #15): it shows the store policy and
// the live status, previews what a new history window would retire before
// applying it, clears the index only after a confirmation, and follows the
// status from indexing back to current while it is open.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDir, makeHome, serve, launch, openPage, cleanup } from './lib/env.mjs';

let dir;
let server;
let browser;

before(async () => {
  dir = tempDir();
  const home = makeHome(dir, { sessions: 40 });
  server = await serve(home);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  cleanup(dir);
});

const status = async () => (await fetch(`${server.url}/api/index/status`)).json();

async function dryRun(days) {
  const r = await fetch(`${server.url}/api/index/policy?history_days=${days}&dry_run=true`, {
    method: 'POST',
    headers: { 'X-Recall-Action': 'test' },
  });
  return r.json();
}

test('history days are previewed before they apply; clear asks first and the status goes indexing → current', { timeout: 180_000 }, async () => {
  const page = await openPage(browser, server.url);
  const before = await status();
  assert.equal(before.policy.history_days, 0, 'served with --retention-days 0');
  await page.click('#settings-btn');
  await page.waitForSelector('#settings[open] .settings-status');
  await page.waitForFunction(() => / sessions · revision /.test(document.querySelector('#settings .settings-status').textContent));
  assert.ok((await page.textContent('#settings .settings-status')).includes(`${before.sessions} sessions`));
  assert.equal(await page.inputValue('#settings input[name=history_days]'), '0');
  assert.equal(await page.isChecked('#settings input[name=enabled]'), true);

  // A window that keeps about half the sessions (the generated home's dates
  // are fixed, so it is computed from the coverage): the pane says what it
  // would retire, and nothing has changed yet.
  const spans = Object.values(before.coverage).filter((c) => c.sessions > 0);
  const oldest = Math.min(...spans.map((c) => c.oldest_ts_ms));
  const newest = Math.max(...spans.map((c) => c.newest_ts_ms));
  const days = Math.ceil((Date.now() - (oldest + newest) / 2) / 86_400_000);
  const expected = await dryRun(days);
  assert.ok(expected.retires > 0 && expected.retires < before.sessions, JSON.stringify(expected));
  await page.fill('#settings input[name=history_days]', String(days));
  await page.waitForFunction((n) => document.getElementById('settings').dataset.retires === String(n), expected.retires);
  const preview = await page.textContent('#settings .settings-preview');
  assert.ok(preview.includes(`${expected.retires} indexed session`), preview);
  assert.equal((await status()).policy.history_days, 0, 'a preview changes nothing');
  assert.equal(await page.isDisabled('#settings button[name=apply]'), false);
  await page.click('#settings button[name=apply]');
  await page.waitForFunction(() => /Saved: /.test(document.querySelector('#settings .settings-message').textContent));
  assert.equal((await status()).policy.history_days, days, 'applied');

  // Clear: the first click only asks; cancel keeps the index.
  await page.click('#settings button[name=clear]');
  assert.equal(await page.isVisible('#settings .settings-confirm'), true, 'a confirmation is asked');
  await page.click('#settings button[name=cancel-clear]');
  assert.equal(await page.isVisible('#settings .settings-confirm'), false);
  assert.equal((await status()).store_id, before.store_id, 'cancel clears nothing');

  // Confirmed: a new store, and the pane follows the rebuild to the end.
  await page.evaluate(() => {
    const d = document.getElementById('settings');
    window.phases = [d.dataset.phase];
    new MutationObserver(() => window.phases.push(d.dataset.phase)).observe(d, { attributes: true, attributeFilter: ['data-phase'] });
  });
  await page.click('#settings button[name=clear]');
  await page.click('#settings button[name=confirm-clear]');
  await page.waitForFunction(() => window.phases.includes('indexing'), null, { timeout: 30_000 });
  // The generated home holds damaged files on purpose: its finished phase
  // may be `degraded` rather than `current`.
  const done = before.phase;
  assert.ok(['current', 'degraded'].includes(done), done);
  await page.waitForFunction((p) => document.getElementById('settings').dataset.phase === p, done, { timeout: 120_000 });
  const phases = await page.evaluate(() => window.phases);
  assert.ok(phases.lastIndexOf('indexing') < phases.lastIndexOf(done), phases.join(' '));
  const after = await status();
  assert.notEqual(after.store_id, before.store_id, 'a new store id');
  assert.ok(after.sessions > 0, 'rebuilt');
  assert.equal(after.policy.history_days, days, 'clearing keeps the policy');
  assert.equal(after.sessions, before.sessions - expected.retires, 'rebuilt under the new window');
  const text = await page.textContent('#settings .settings-status');
  assert.ok(text.includes(`${after.sessions} sessions`), text);

  await page.click('#settings button[name=close]');
  assert.deepEqual(page.errors, []);
  await page.context().close();
});
