// The dashboard against the real `recall serve` on a generated home with a
// planted XSS transcript: search, highlights, filters, paging, jump-to-hit,
// the XSS cases, the palette, keyboard navigation and coverage.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { tempDir, makeHome, serve, warm, launch, openPage, cleanup, recall, XSS_KEY } from './lib/env.mjs';
import { expectedMarks, until } from './lib/expect.mjs';

let dir;
let home;
let server;
let browser;

before(async () => {
  dir = tempDir();
  home = makeHome(dir, { sessions: 60 });
  server = await serve(home);
  await warm(server.url);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  cleanup(dir);
});

async function api(path, params = {}) {
  const qs = new URLSearchParams(params).toString();
  const res = await fetch(`${server.url}${path}${qs ? `?${qs}` : ''}`);
  return res.json();
}

async function typeQuery(page, q) {
  await page.fill('#q', '');
  await page.type('#q', q, { delay: 10 });
}

async function waitResults(page) {
  await page.waitForFunction(() => {
    const r = document.getElementById('results');
    return r.getAttribute('aria-busy') !== 'true' && (r.querySelector('.session-card, .empty') || document.querySelector('#note .error'));
  });
  await page.waitForTimeout(300);
  await page.waitForFunction(() => document.getElementById('results').getAttribute('aria-busy') !== 'true');
}

function cardsOf(page) {
  return page.$$eval('.session-card', (cards) => cards.map((c) => ({
    key: c.dataset.key,
    badges: [...c.querySelectorAll('header .badge')].map((b) => b.textContent),
    hits: [...c.querySelectorAll('.hit')].map((h) => ({
      role: h.querySelector('.role')?.textContent,
      marks: [...h.querySelectorAll('mark')].map((m) => m.textContent),
      text: h.querySelector('.snippet').textContent,
    })),
  })));
}

test('search as you type groups hits by session with highlights from byte ranges', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  await typeQuery(page, 'strasse');
  await waitResults(page);
  const expected = await api('/api/sessions/message-search', { q: 'strasse' });
  assert.ok(expected.sessions.length > 0, 'the generated corpus has Straße sentences');
  const cards = await cardsOf(page);
  assert.deepEqual(cards.map((c) => c.key), expected.sessions.map((s) => s.session_key));
  expected.sessions.forEach((s, i) => {
    assert.equal(cards[i].hits.length, s.hits.length);
    s.hits.forEach((hit, j) => {
      assert.equal(cards[i].hits[j].text, hit.snippet);
      assert.deepEqual(cards[i].hits[j].marks, expectedMarks(hit));
      for (const m of cards[i].hits[j].marks) assert.match(m.normalize('NFC').toLowerCase(), /^stra(ss|ß|ẞ)e$/u);
    });
  });
  assert.equal(new URL(page.url()).searchParams.get('q'), 'strasse');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('non-ASCII highlights cover exactly the matched characters', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  for (const q of ['数据库', 'σίσυφος', 'cafes']) {
    await typeQuery(page, q);
    await waitResults(page);
    const expected = await api('/api/sessions/message-search', { q });
    assert.ok(expected.sessions.length > 0, q);
    const cards = await cardsOf(page);
    expected.sessions.forEach((s, i) => s.hits.forEach((hit, j) => {
      assert.deepEqual(cards[i].hits[j].marks, expectedMarks(hit), `${q} session ${i} hit ${j}`);
    }));
  }
  await page.close();
});

test('one character does not search; a query with no match says what is indexed', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  await typeQuery(page, 'x');
  await page.waitForTimeout(400);
  assert.equal(await page.$$eval('.session-card', (c) => c.length), 0);
  await typeQuery(page, 'zqzqzq-nothing-says-this');
  await waitResults(page);
  const text = await page.textContent('#results');
  assert.match(text, /No conversation matches/);
  for (const src of ['claude-code', 'codex', 'kimi', 'pi', 'intendant', 'dsh']) assert.match(text, new RegExp(src));
  await page.close();
});

test('the query language: OR widens, an exclusion narrows, a malformed query says where', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  const keys = async (q) => {
    await typeQuery(page, q);
    await waitResults(page);
    return page.$$eval('.session-card', (cards) => cards.map((c) => c.dataset.key));
  };
  const fromApi = async (q) => (await (await fetch(`${server.url}/api/sessions/message-search?q=${encodeURIComponent(q)}&limit=100`)).json()).sessions.map((s) => s.session_key);
  for (const q of ['error OR panic', 'error -the', '(cargo | build) test']) {
    const shown = await keys(q);
    const want = await fromApi(q);
    assert.deepEqual(shown, want.slice(0, shown.length), q);
    assert.ok(shown.length > 0, `${q} finds something`);
  }
  const either = await fromApi('error OR panic');
  const one = await fromApi('error');
  assert.ok(either.length >= one.length && one.every((k) => either.includes(k)), 'OR is a superset');
  await typeQuery(page, 'tide (ferry');
  await page.waitForSelector('#note .error');
  assert.match(await page.textContent('#note .error'), /cannot be read at character 6: this parenthesis is never closed/);
  await page.close();
});

test('filters narrow the search and match the API', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  await typeQuery(page, 'the');
  await waitResults(page);
  await page.uncheck('input[name="src-claude-code"]');
  await page.uncheck('input[name="src-kimi"]');
  await page.uncheck('input[name="src-pi"]');
  await page.uncheck('input[name="src-intendant"]');
  await page.uncheck('input[name="src-dsh"]');
  for (const s of ['gemini', 'copilot', 'qwen', 'opencode']) await page.uncheck(`input[name="src-${s}"]`);
  await waitResults(page);
  let cards = await cardsOf(page);
  assert.ok(cards.length > 0);
  for (const c of cards) assert.ok(c.badges.includes('codex'), c.key);
  assert.equal(new URL(page.url()).searchParams.get('source'), 'codex');

  await page.selectOption('select[name="role"]', 'user');
  await waitResults(page);
  cards = await cardsOf(page);
  assert.ok(cards.length > 0);
  for (const c of cards) for (const h of c.hits) assert.equal(h.role, 'user');

  await page.selectOption('select[name="sort"]', 'relevance');
  await page.uncheck('input[name="include_superseded"]');
  await page.uncheck('input[name="subagents"]');
  await page.selectOption('select[name="scope"]', 'all');
  await page.selectOption('select[name="role"]', 'tool');
  await waitResults(page);
  const expected = await api('/api/sessions/message-search', {
    q: 'the', source: 'codex', scope: 'all', role: 'tool', include_superseded: 'false', subagents: 'false', sort: 'relevance',
  });
  cards = await cardsOf(page);
  assert.deepEqual(cards.map((c) => c.key), expected.sessions.map((s) => s.session_key));
  for (const c of cards) for (const h of c.hits) assert.equal(h.role, 'tool');
  await page.close();
});

test('more results follow the cursor without repeating sessions', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  await typeQuery(page, 'the');
  await waitResults(page);
  const first = await api('/api/sessions/message-search', { q: 'the' });
  assert.ok(first.cursor, 'a common word spans more than one page');
  assert.equal((await cardsOf(page)).length, first.sessions.length);
  await page.click('button.more');
  await page.waitForFunction((n) => document.querySelectorAll('.session-card').length > n, first.sessions.length);
  const second = await api('/api/sessions/message-search', { q: 'the', cursor: first.cursor });
  const keys = (await cardsOf(page)).map((c) => c.key);
  assert.deepEqual(keys, [...first.sessions, ...second.sessions].map((s) => s.session_key));
  assert.equal(new Set(keys).size, keys.length);
  await page.close();
});

test('opening a hit jumps to it in the session and highlights it', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  await typeQuery(page, 'strasse');
  await waitResults(page);
  const expected = await api('/api/sessions/message-search', { q: 'strasse', limit: '50' });
  // Pick a hit deep in a long session so the jump has to scroll.
  const target = await page.$$eval('.hit', (hits) => hits.length);
  assert.ok(target > 0);
  await page.click('.session-card .hit');
  await page.waitForSelector('#session .entry');
  const hit = expected.sessions[0].hits[0];
  const located = await page.waitForSelector('#session .entry.located');
  const marks = await located.$$eval('mark', (m) => m.map((x) => x.textContent));
  assert.ok(marks.length > 0);
  for (const m of marks) assert.match(m.normalize('NFC').toLowerCase(), /^stra(ss|ß|ẞ)e$/u);
  assert.ok((await located.textContent()).includes(hit.snippet.trim().slice(0, 40)));
  // It is scrolled into the panel's view.
  const visible = await page.evaluate(() => {
    const panel = document.getElementById('session').getBoundingClientRect();
    const el = document.querySelector('#session .entry.located').getBoundingClientRect();
    return el.top < panel.bottom && el.bottom > panel.top;
  });
  assert.ok(visible);
  await page.close();
});

test('a stale locator is reported plainly', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  await page.evaluate(async (key) => {
    const { SessionView } = await import('/js/session.js');
    const { online } = await import('/js/api.js');
    const view = new SessionView(document.getElementById('session'), () => online, () => {});
    await view.open(key, { locator: { kind: 'native_event', line_no: 999, content_hash16: '0000000000000000' }, ranges: [] });
  }, XSS_KEY);
  const notice = await page.waitForSelector('#session .notice');
  assert.match(await notice.textContent(), /stale|unavailable/);
  await page.close();
});

test('transcript text is rendered as text, never as HTML', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  await typeQuery(page, 'xsscanary');
  await waitResults(page);
  const text = await page.textContent('#results');
  assert.ok(text.includes('<img src=x onerror=alert(1)>'), text);
  assert.ok(text.includes('<script>alert(2)</script>'));
  assert.ok(text.includes('</mark><b onmouseover=alert(3)>bold?</b>'));
  await page.click('.session-card .title');
  await page.waitForSelector('#session .entry');
  const sessionText = await page.textContent('#session');
  assert.ok(sessionText.includes('<svg/onload=alert(4)>'));
  const injected = await page.evaluate(() => document.querySelectorAll('#results img, #results script, #results svg, #results b, #session img, #session script, #session svg, #session b').length);
  assert.equal(injected, 0);
  await page.waitForTimeout(200);
  assert.deepEqual(page.dialogs, []);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the page refuses inline script (Content-Security-Policy)', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  const csp = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
  assert.match(csp, /script-src 'self' 'wasm-unsafe-eval'/);
  assert.doesNotMatch(csp, /unsafe-inline/);
  const ran = await page.evaluate(async () => {
    const s = document.createElement('script');
    s.textContent = 'window.__injected = true';
    document.head.append(s);
    const img = document.createElement('img');
    img.setAttribute('onerror', 'window.__handler = true');
    img.src = 'x:';
    document.body.append(img);
    await new Promise((r) => setTimeout(r, 100));
    img.remove();
    return { inline: window.__injected === true, handler: window.__handler === true };
  });
  assert.deepEqual(ran, { inline: false, handler: false });
  await page.close();
});

test('Ctrl-K opens the palette; Enter opens the chosen session', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  await page.keyboard.press('Control+k');
  await page.waitForSelector('dialog#palette[open]');
  await page.keyboard.type('xsscanary');
  await page.waitForFunction(() => [...document.querySelectorAll('.palette-list .hint')].some((h) => h.textContent === 'claude-code'));
  await page.keyboard.press('Enter');
  await page.waitForSelector('#session .entry');
  assert.equal(await page.$('dialog#palette[open]'), null);
  assert.match(await page.textContent('#session .session-meta'), /5e55a0c1/);
  await page.close();
});

test('j and k move between hits; Enter opens one', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  await typeQuery(page, 'strasse');
  await waitResults(page);
  await page.click('body', { position: { x: 5, y: 300 } });
  await page.keyboard.press('j');
  await page.keyboard.press('j');
  await page.keyboard.press('k');
  await page.keyboard.press('j');
  const selected = await page.evaluate(() => [...document.querySelectorAll('.hit')].indexOf(document.activeElement));
  assert.equal(selected, 1);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#session .entry.located');
  await page.close();
});

test('a busy server (429) is retried; an expired cursor (410) restarts at page 1', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  const seen = [];
  let busyOnce = true;
  await page.route('**/api/sessions/message-search?**', async (route) => {
    const u = new URL(route.request().url());
    seen.push(u.searchParams.has('cursor') ? 'cursor' : 'first');
    if (busyOnce && !u.searchParams.has('cursor')) {
      busyOnce = false;
      await route.fulfill({ status: 429, contentType: 'application/json', body: '{"ok":false,"error":"busy","message":"too many searches"}' });
    } else if (u.searchParams.has('cursor')) {
      await route.fulfill({ status: 410, contentType: 'application/json', body: '{"ok":false,"error":"cursor_expired","message":"expired"}' });
    } else {
      await route.continue();
    }
  });
  await typeQuery(page, 'the');
  await waitResults(page);
  const first = (await cardsOf(page)).map((c) => c.key);
  assert.ok(first.length > 0);
  assert.deepEqual(seen.slice(0, 2), ['first', 'first'], 'the 429 was retried');
  assert.equal(await page.textContent('#note'), '');
  await page.click('button.more');
  await page.waitForFunction((n) => n > 0, seen.length);
  await until(async () => seen.length >= 4, 10_000, 'the restart after 410');
  await waitResults(page);
  assert.deepEqual(seen.slice(2, 4), ['cursor', 'first'], 'a 410 restarts without the cursor');
  assert.deepEqual((await cardsOf(page)).map((c) => c.key), first);
  assert.equal(await page.textContent('#note'), '', 'silently');
  await page.close();
});

test('a slow answer to an older query never replaces a newer one', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  await page.route('**/api/sessions/message-search?**', async (route) => {
    const q = new URL(route.request().url()).searchParams.get('q');
    if (q === 'strasse') await new Promise((r) => setTimeout(r, 1500));
    await route.continue().catch(() => {});
  });
  await typeQuery(page, 'strasse');
  await page.waitForTimeout(400); // past the debounce: the slow request is in flight
  await typeQuery(page, 'xsscanary');
  await page.waitForSelector(`.session-card[data-key="${XSS_KEY}"]`);
  await page.waitForTimeout(2000); // the slow answer to 'strasse' has had its chance to land
  const keys = (await cardsOf(page)).map((c) => c.key);
  assert.deepEqual(keys, [XSS_KEY]);
  await page.close();
});

test('the daemon serves the report viewer at /report, which opens report files', { timeout: 120_000 }, async () => {
  const file = join(dir, 'one.html');
  recall(['--home', home, '--retention-days', '0', 'report', '--no-refresh', XSS_KEY, '-o', file]);
  const page = await openPage(browser, null);
  await page.goto(`${server.url}/report`);
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
  assert.match(await page.textContent('#results'), /open a report file/);
  await page.setInputFiles('#open-files', [file]);
  await page.waitForSelector('.session-card');
  assert.deepEqual(await page.$$eval('.session-card', (c) => c.map((x) => x.dataset.key)), [XSS_KEY]);
  await page.fill('#q', 'xsscanary');
  await page.waitForSelector('.session-card mark');
  assert.deepEqual(page.errors, []);
  assert.deepEqual(page.dialogs, []);
  await page.close();
});

test('indexing progress is shown while the daemon indexes', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, null);
  let calls = 0;
  await page.route('**/api/index/status', async (route) => {
    calls += 1;
    const res = await route.fetch();
    const body = await res.json();
    const indexing = calls < 3;
    await route.fulfill({ response: res, json: { ...body, phase: indexing ? 'indexing' : 'current', files_indexed: 40, files_due: indexing ? 60 : 0 } });
  });
  await page.goto(server.url);
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
  await page.waitForSelector('#index-status progress');
  assert.match(await page.textContent('#index-status'), /Indexing 40\/100 files/);
  assert.equal(await page.getAttribute('#index-status progress', 'value'), '40');
  // It polls quickly while indexing, and says so when done.
  await page.waitForFunction(() => /Index current/.test(document.getElementById('index-status').textContent), null, { timeout: 10_000 });
  await page.close();
});

test('the session panel shows lineage and copies the resume command', { timeout: 120_000 }, async () => {
  const manifest = await api('/api/index/manifest');
  const [childKey, child] = Object.entries(manifest.sessions).find(([, e]) => e.parent && manifest.sessions[e.parent.key] && e.resume);
  const context = await browser.newContext();
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  const page = await openPage(browser, server.url, { context });
  await page.evaluate(async (key) => {
    const { SessionView } = await import('/js/session.js');
    const { online } = await import('/js/api.js');
    const view = new SessionView(document.getElementById('session'), () => online, () => {});
    await view.open(key);
  }, childKey);
  await page.waitForSelector('#lineage button');
  const lineage = await page.textContent('#lineage');
  assert.match(lineage, /Ancestors/);
  const parentTitle = manifest.sessions[child.parent.key].title || child.parent.key;
  assert.ok(lineage.includes(parentTitle), lineage);
  assert.equal(await page.textContent('#session .resume code'), child.resume);
  await page.click('#session .resume button.copy');
  await page.waitForFunction(() => document.querySelector('#session .resume button.copy').textContent === 'Copied');
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), child.resume);
  await context.close();
});
