// Tool cards in the session panel, over a generated home (gen.py: Claude
// Code, Codex, Kimi, Pi tool calls) and the real transcripts of
// tests/shared/corpus (Claude Code, Codex): a shell command with the output
// of the row after it (exit status when recorded, folded after 20 lines), an
// edit as a unified diff, a read or write with its path, a web fetch with its
// URL; a tool without a card keeps the raw text. Which row is which kind is
// decided here from the daemon's session view (the tool name and its JSON
// arguments), independently of the page, and each card is checked against
// the row's own text. The same cards are checked in an HTML report.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, copyFileSync, readdirSync } from 'node:fs';
import { join, basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tempDir, makeHome, serve, launch, openPage, cleanup, recall, SHARED } from './lib/env.mjs';

const LONG = { timeout: 300_000 };
const PAGE = 50;
let dir;
let home;
let server;
let browser;
const found = { gen: {}, real: {} };

const KIND = {
  shell: ['bash', 'shell', 'exec_command', 'local_shell'],
  edit: ['edit', 'multiedit', 'strreplacefile', 'apply_patch'],
  write: ['write', 'writefile'],
  read: ['read', 'readfile'],
  fetch: ['webfetch'],
  raw: ['grep', 'glob', 'todowrite'],
};

/** The reference reading of a tool row: `{name, args}` when it is a call with JSON (or patch) arguments. */
function call(text) {
  const m = /^([A-Za-z_]\w*) ([\s\S]*)$/.exec(text);
  if (!m) return null;
  if (m[1] === 'apply_patch') return { name: m[1], args: m[2] };
  try {
    const args = JSON.parse(m[2]);
    return args && typeof args === 'object' && !Array.isArray(args) ? { name: m[1], args } : null;
  } catch {
    return null;
  }
}

function kindOf(c) {
  const n = c.name.toLowerCase();
  return Object.keys(KIND).find((k) => KIND[k].includes(n)) || null;
}

async function api(path) {
  return (await fetch(`${server.url}${path}`)).json();
}

/** Plants the real Claude Code and Codex transcripts of tests/shared/corpus. */
function plantReal(home) {
  const claude = join(SHARED, 'corpus/claude-code');
  for (const d of ['claude-code-viewer-1.0.98', 'spotter-2.1.39', 'spotter-2.1.38']) {
    const project = join(home, '.claude/projects', `-home-real-${d.replace(/\./g, '-')}`);
    mkdirSync(project, { recursive: true });
    for (const f of readdirSync(join(claude, d))) if (f.endsWith('.jsonl')) copyFileSync(join(claude, d, f), join(project, f));
  }
  const codex = join(SHARED, 'corpus/codex/real');
  const day = join(home, '.codex/sessions/2025/06/01');
  mkdirSync(day, { recursive: true });
  readdirSync(codex).filter((f) => f.endsWith('.jsonl')).forEach((f, i) => {
    copyFileSync(join(codex, f), join(day, `rollout-2025-06-01T00-00-0${i}-0000000${i}-0000-4000-8000-00000000000${i}.jsonl`));
  });
}

before(async () => {
  dir = tempDir();
  home = makeHome(dir, { sessions: 30 });
  plantReal(home);
  server = await serve(home);
  browser = await launch();
  const list = await api('/api/sessions?limit=500');
  for (const s of list.sessions) {
    const view = await api(`/api/session/${encodeURIComponent(s.session_key)}?scope=all&limit=2000`);
    const set = (view.session.paths || []).some((p) => /\/-home-real-|\/2025\/06\/01\//.test(p)) ? 'real' : 'gen';
    let prev = null;
    for (const e of view.entries) {
      if (e.role === 'tool' && !e.truncated) {
        const c = call(e.text);
        const k = c ? kindOf(c) : null;
        const pk = prev && prev.role === 'tool' && call(prev.text) ? kindOf(call(prev.text)) : null;
        const entry = { key: s.session_key, index: e.index, text: e.text, call: c };
        if (k && !found[set][k]) found[set][k] = entry;
        if (!c && pk === 'shell') {
          const lines = e.text.replace(/\n$/, '').split('\n').length;
          if (!found[set].output) found[set].output = entry;
          if (lines > 25 && !found[set].long) found[set].long = entry;
        }
      }
      prev = e;
    }
  }
});

after(async () => {
  await browser?.close();
  await server?.stop();
  cleanup(dir);
});

async function openAt(page, base, e) {
  const offset = Math.floor(e.index / PAGE) * PAGE;
  await page.goto(`${base}/?scope=all&session=${encodeURIComponent(e.key)}&offset=${offset}`);
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
  const sel = `#session .entry[data-index="${e.index}"]`;
  await page.waitForSelector(sel);
  return page.locator(sel);
}

function firstLine(s) {
  return s.split('\n').find((l) => l.trim()) ?? '';
}

async function checkKinds(set, want) {
  const page = await openPage(browser);
  const f = found[set];
  for (const k of want) assert.ok(f[k], `${set}: a ${k} row is in the corpus (found ${Object.keys(f).join(', ')})`);
  for (const k of want) {
    const e = f[k];
    const entry = await openAt(page, server.url, e);
    const what = `${set} ${k} ${e.key} #${e.index}`;
    if (k === 'raw') {
      assert.equal(await entry.locator('.tool-card').count(), 0, `${what}: no card`);
      assert.equal(await entry.locator('.text.raw').textContent(), e.text, `${what}: the raw text`);
      continue;
    }
    const kind = { long: 'output' }[k] || k;
    const card = entry.locator(`.tool-card.kind-${kind}`);
    assert.equal(await card.count(), 1, `${what}: a ${kind} card`);
    const text = await card.textContent();
    const a = e.call?.args;
    if (k === 'shell') {
      let cmd = a.command ?? a.cmd;
      if (Array.isArray(cmd)) cmd = cmd.length === 3 && /sh$/.test(cmd[0]) ? cmd[2] : cmd.join(' ');
      assert.equal(await card.locator('.tool-cmd').textContent(), `$ ${cmd}`, what);
    } else if (k === 'edit') {
      if (typeof a === 'string') {
        assert.ok(text.includes(firstLine(a)), `${what}: the patch`);
      } else {
        const old = a.old_string ?? a.old ?? a.oldText ?? a.edits?.[0]?.old_string ?? '';
        const neu = a.new_string ?? a.new ?? a.newText ?? a.edits?.[0]?.new_string ?? '';
        assert.ok(text.includes(a.file_path ?? a.path), `${what}: the path`);
        const dels = await card.locator('.line.del').allTextContents();
        const adds = await card.locator('.line.add').allTextContents();
        const oldLines = new Set(old.split('\n'));
        const newLines = new Set(neu.split('\n'));
        assert.ok(dels.length + adds.length > 0, `${what}: changed lines`);
        for (const d of dels) assert.ok(d.startsWith('-') && oldLines.has(d.slice(1)), `${what}: ${d} is an old line`);
        for (const d of adds) assert.ok(d.startsWith('+') && newLines.has(d.slice(1)), `${what}: ${d} is a new line`);
      }
    } else if (k === 'read' || k === 'write') {
      assert.equal(await card.locator('.tool-path').textContent(), a.file_path ?? a.path, what);
    } else if (k === 'fetch') {
      assert.equal(await card.locator('.tool-url').textContent(), a.url, what);
    } else if (k === 'output' || k === 'long') {
      const status = await card.locator('.exit').allTextContents();
      const code = /Process exited with code (\d+)|"exit_code":(\d+)|Exit code: (\d+)/.exec(e.text);
      assert.deepEqual(status, code ? [`exit ${code[1] ?? code[2] ?? code[3]}`] : [], `${what}: the exit status`);
      if (k === 'long') {
        const shown = await card.locator('pre.output').textContent();
        assert.equal(shown.split('\n').length, 20, `${what}: 20 lines shown`);
        await card.locator('.tool-more').click();
        const all = await card.locator('pre.output').textContent();
        assert.ok(all.split('\n').length > 20, `${what}: all lines after Show all`);
      }
    }
    // Text stays text: only the card's own elements.
    const tags = await card.evaluate((el) => [...el.querySelectorAll('*')].map((n) => n.tagName.toLowerCase()));
    for (const t of tags) assert.ok(['div', 'span', 'pre', 'code', 'button'].includes(t), `${what}: <${t}>`);
  }
  assert.deepEqual(page.errors, []);
  await page.context().close();
}

test('tool cards of every kind from a generated home', LONG, async () => {
  await checkKinds('gen', ['shell', 'output', 'long', 'edit', 'write', 'read', 'raw']);
});

test('tool cards from the real transcripts of tests/shared/corpus', LONG, async () => {
  await checkKinds('real', ['shell', 'output', 'edit', 'write', 'read', 'fetch', 'raw']);
});

test('the same cards in an HTML report', LONG, async () => {
  const e = found.real.edit && found.real.shell ? found.real : found.gen;
  const out = join(dir, 'report.html');
  const session = e.shell.key;
  recall(['--home', home, '--retention-days', '0', 'report', '--no-refresh', session, '-o', out]);
  const page = await openPage(browser);
  await page.goto(pathToFileURL(out).href);
  await page.waitForSelector('.session-card .title', { timeout: 60_000 });
  await page.selectOption('select[name=scope]', 'all');
  await page.click('.session-card .title');
  await page.waitForSelector('#session .tool-card.kind-shell', { timeout: 30_000 });
  assert.ok(await page.locator('#session .tool-card.kind-shell .tool-cmd').count() >= 1);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});
