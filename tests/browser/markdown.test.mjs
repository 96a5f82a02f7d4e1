// User and assistant text rendered as Markdown in the session panel, built
// from markdown-it's tokens: structure, highlighted code, links with their
// target (only http(s) clickable), no HTML from the transcript ever, marks on
// the matched characters inside the rendered text, and the raw toggle.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDir, makeHome, plantMarkdown, serve, launch, openPage, cleanup, MD_KEY, XSS_KEY } from './lib/env.mjs';
import { assertNotBlank } from './lib/shots.mjs';

let dir;
let server;
let browser;

before(async () => {
  dir = tempDir();
  const home = makeHome(dir, { sessions: 12 });
  plantMarkdown(home);
  server = await serve(home);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  cleanup(dir);
});

async function openMd(page, hit = null) {
  await page.evaluate(async ([key, hit]) => {
    const { SessionView } = await import('/js/session.js');
    const { online } = await import('/js/api.js');
    const { renderMarkdown } = await import('/js/markdown.js');
    const view = new SessionView(document.getElementById('session'), () => online, () => {}, () => 'conversation', { markdown: renderMarkdown });
    window.view = view;
    await view.open(key, hit);
  }, [MD_KEY, hit]);
  await page.waitForSelector('#session .entry');
}

test('Markdown is rendered from tokens: headings, emphasis, lists, tables, code', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  await openMd(page);
  const a = await page.$('#session .entry.role-assistant .md');
  assert.ok(a, 'the assistant text is rendered');
  assert.equal(await a.$eval('h1', (e) => e.textContent), 'Release notes');
  assert.equal(await a.$eval('strong', (e) => e.textContent), 'strong mdcanary');
  assert.equal(await a.$eval('em', (e) => e.textContent), 'emphasis');
  assert.equal(await a.$eval('p > code', (e) => e.textContent), 'inline mdcanary code');
  assert.deepEqual(await a.$$eval('ul > li', (l) => l.map((e) => e.textContent.trim())), ['one', 'two with link <http://example.com/two>']);
  assert.deepEqual(await a.$$eval('table th', (l) => l.map((e) => e.textContent)), ['col a', 'col b']);
  assert.equal(await a.$eval('table td', (e) => e.className), 'align-center');
  // Fenced code is highlighted with spans, the code itself kept as text.
  const code = await a.$('pre > code.language-rust');
  assert.ok(code);
  assert.ok((await code.$$('span.hljs-keyword')).length > 0);
  assert.equal(await code.textContent(), 'fn main() { println!("mdcanary </script><script>alert(8)</script>"); }');
  await assertNotBlank(page, 'a session with rendered Markdown');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('links show their target; only http(s) ones are clickable; images are never loaded', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  const requested = [];
  page.on('request', (r) => requested.push(r.url()));
  await openMd(page);
  const links = await page.$$eval('#session .md a', (l) => l.map((a) => ({ href: a.getAttribute('href'), text: a.textContent, target: a.target, rel: a.rel })));
  assert.deepEqual(links.map((l) => l.href), [
    'https://example.com/docs', 'https://example.org/auto', 'http://www.example.net', 'http://example.com/two',
  ]);
  for (const l of links) {
    assert.equal(l.target, '_blank');
    assert.match(l.rel, /noopener/);
  }
  const user = await page.textContent('#session .entry.role-user .md');
  assert.ok(user.includes('the docs <https://example.com/docs>'), 'a link shows its target');
  assert.ok(user.includes('bad <javascript:alert(5)>'), 'a javascript: link is shown, not followed');
  assert.ok(user.includes('[image: pic] <https://example.com/x.png>'));
  const inert = await page.$$eval('#session .md .link-inert', (l) => l.map((e) => e.textContent));
  assert.deepEqual(inert, ['bad', 'data', 'vb', 'rel']);
  assert.equal(await page.$$eval('#session img, #session script, #session iframe, #session [onclick], #session [onerror]', (l) => l.length), 0);
  assert.ok(!requested.some((u) => u.includes('example.')), 'nothing was fetched from the transcript');
  await page.waitForTimeout(200);
  assert.deepEqual(page.dialogs, []);
  await page.close();
});

test('HTML in Markdown stays text: HTML blocks, inline tags, </script> in code', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  await openMd(page);
  const text = await page.textContent('#session .entry.role-assistant .md');
  assert.ok(text.includes('<div onclick="alert(6)">html block mdcanary</div>'), text);
  assert.ok(text.includes('<img src=x onerror=alert(7)>'));
  assert.ok(text.includes('</script><script>alert(8)</script>'));
  // The XSS fixture, rendered as Markdown too, still injects nothing.
  await page.evaluate(async (key) => window.view.open(key), XSS_KEY);
  await page.waitForFunction((k) => document.querySelector('#session .session-meta .key')?.textContent === k, XSS_KEY);
  const xss = await page.textContent('#session .entries');
  assert.ok(xss.includes('<img src=x onerror=alert(1)>'));
  assert.ok(xss.includes('<svg/onload=alert(4)>'));
  assert.equal(await page.$$eval('#session img, #session script, #session svg, #session b', (l) => l.length), 0);
  await page.waitForTimeout(200);
  assert.deepEqual(page.dialogs, []);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('highlights land on the matched characters inside rendered Markdown', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  const res = await (await fetch(`${server.url}/api/sessions/message-search?q=mdcanary&role=assistant`)).json();
  const hit = res.sessions.find((s) => s.session_key === MD_KEY).hits[0];
  assert.ok(hit.ranges.length >= 4, 'the ranges of the snippet: bold, inline code, table cell, HTML block');
  await openMd(page, hit);
  const located = await page.waitForSelector('#session .entry.located .md');
  const marks = await located.$$eval('mark', (m) => m.map((x) => [x.textContent, x.parentElement.tagName.toLowerCase()]));
  assert.equal(marks.length, hit.ranges.length, 'every range is marked');
  for (const [text] of marks) assert.equal(text, 'mdcanary');
  const inside = new Set(marks.map(([, tag]) => tag));
  for (const tag of ['strong', 'code', 'td', 'p']) assert.ok(inside.has(tag), `a mark inside <${tag}>: ${[...inside]}`);
  // Inside highlighted code too (every occurrence of the entry's text marked).
  const inCode = await page.evaluate(async () => {
    const { renderMarkdown } = await import('/js/markdown.js');
    const text = window.view.page.entries.find((e) => e.role === 'assistant').text;
    const marks = [];
    for (let i = text.indexOf('mdcanary'); i >= 0; i = text.indexOf('mdcanary', i + 1)) marks.push([i, i + 8]);
    const el = renderMarkdown(text, marks);
    return { all: marks.length, marked: [...el.querySelectorAll('mark')].map((m) => m.textContent), code: [...el.querySelectorAll('pre .hljs-string mark')].map((m) => m.textContent) };
  });
  assert.equal(inCode.marked.length, inCode.all);
  assert.deepEqual(inCode.code, ['mdcanary']);
  await page.close();
});

test('marks match a naive reference: exact on plain text, never misplaced on Markdown (300 random cases)', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  const failures = await page.evaluate(async () => {
    const { renderMarkdown } = await import('/js/markdown.js');
    let seed = 16;
    const rand = (n) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const words = ['alpha', 'Straße', '数据库', 'naïve', 'x', 'emoji😀', 'tide', 'CSV'];
    const markup = ['**', '*', '`', '# ', '- ', '> ', '[a](https://e.x/)', '&amp;', '\\*', '| a | b |\n|---|---|\n| c | d |', '```\ncode x\n```'];
    const out = [];
    for (let n = 0; n < 300; n += 1) {
      const plain = n % 2 === 0;
      const parts = [];
      const len = 3 + rand(20);
      for (let i = 0; i < len; i += 1) {
        if (!plain && rand(4) === 0) parts.push(markup[rand(markup.length)]);
        parts.push(words[rand(words.length)]);
        parts.push(i % 7 === 6 ? '\n' : ' ');
      }
      const text = parts.join('').trim();
      const ranges = [];
      for (let r = rand(4) + 1, at = 0; r > 0 && at < text.length; r -= 1) {
        const a = at + rand(Math.max(1, text.length - at));
        const b = Math.min(text.length, a + 1 + rand(12));
        if (b > a) ranges.push([a, b]);
        at = b;
      }
      const el = renderMarkdown(text, ranges);
      const marks = [...el.querySelectorAll('mark')].map((m) => m.textContent);
      const inRanges = ranges.map(([a, b]) => text.slice(a, b));
      for (const m of marks) if (!inRanges.some((r) => r.includes(m))) out.push({ text, ranges, mark: m });
      if (plain) {
        // Plain text: every character of a range is marked, newlines aside.
        const want = inRanges.join('').replace(/\n/g, '');
        if (marks.join('') !== want) out.push({ text, ranges, marks, want });
      }
    }
    return out;
  });
  assert.deepEqual(failures.slice(0, 3), []);
  await page.close();
});

test('the raw toggle shows the original text, and the choice is kept', { timeout: 120_000 }, async () => {
  const page = await openPage(browser, server.url);
  await openMd(page);
  await page.check('#session .raw-toggle input');
  await page.waitForSelector('#session .entry.role-assistant .text.raw');
  const raw = await page.textContent('#session .entry.role-assistant .text');
  assert.ok(raw.includes('**strong mdcanary**'), raw);
  assert.ok(raw.includes('```rust'));
  assert.equal(await page.$('#session .md'), null);
  await openMd(page);
  assert.equal(await page.$('#session .md'), null, 'raw stays on for the next session');
  await page.uncheck('#session .raw-toggle input');
  await page.waitForSelector('#session .entry.role-assistant .md h1');
  await page.close();
});
