// Test environment: a generated home (gen.py) plus planted fixtures, the real
// `recall serve` on an ephemeral loopback port, and headless Chromium from
// Debian driven by playwright-core.

import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, copyFileSync, existsSync, rmSync, readFileSync, readdirSync, writeFileSync, cpSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
/** The repository root. */
export const REPO = resolve(here, '../../..');
/** The vendored copy of the shared folder (tests/shared in the repository). */
export const SHARED = process.env.RECALL_SHARED || resolve(REPO, 'tests/shared');
/** The recall binary under test. */
export const BIN = process.env.RECALL_BIN || join(REPO, 'target/debug/recall');
/** Chromium from Debian. */
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
/** The XSS fixture's session key. */
export const XSS_KEY = 'claude-code:5e55a0c1-0000-4000-8000-00000000a001';
/** The Markdown fixture's session key (planted by `plantMarkdown`). */
export const MD_KEY = 'claude-code:5e55a0c1-0000-4000-8000-00000000a002';

/** Plants the Markdown transcript (headings, tables, code, hostile links) in `home`. */
export function plantMarkdown(home) {
  const project = join(home, '.claude/projects/-home-mara-code-md-lab');
  mkdirSync(project, { recursive: true });
  copyFileSync(join(here, '../fixtures/markdown-session.jsonl'), join(project, '5e55a0c1-0000-4000-8000-00000000a002.jsonl'));
}

/** A fresh temporary directory, removed by `cleanup()`. */
export function tempDir(prefix = 'recall-browser-') {
  return mkdtempSync(join(process.env.RECALL_TEST_TMP || tmpdir(), prefix));
}

/** The agents corpus-gen does not write, shared with the wasmtime parity runs. */
export const AGENTS = JSON.parse(readFileSync(join(REPO, 'tests/fixtures/parity-agents.json'), 'utf8')).agents;

/** A home-relative or repository-relative path from the agents table, refused if it climbs out. */
function plain(rel) {
  if (rel.startsWith('/') || rel.split('/').some((c) => c === '..' || c === '.' || c === '')) {
    throw new Error(`parity-agents.json: ${JSON.stringify(rel)} is not a plain relative path`);
  }
  return rel;
}

/**
 * Places the sessions of every agent in `tests/fixtures/parity-agents.json`
 * in `home` by the rule its `about` states (corpus files with `__` turned
 * into `/`, written `files`, SQLite databases built from `sql`, copied
 * `trees`). Returns the sources planted.
 */
export function plantAgents(home) {
  for (const a of AGENTS) {
    for (const [rel, text] of Object.entries(a.files || {})) {
      const dst = join(home, plain(rel));
      mkdirSync(dirname(dst), { recursive: true });
      writeFileSync(dst, text);
    }
    for (const [rel, sql] of Object.entries(a.sql || {})) {
      const dst = join(home, plain(rel));
      mkdirSync(dirname(dst), { recursive: true });
      const script = 'import sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\nc.executescript(open(sys.argv[2], encoding="utf-8").read())\nc.commit()\nc.close()';
      execFileSync('python3', ['-c', script, dst, join(REPO, plain(sql))]);
    }
    for (const [rel, tree] of Object.entries(a.trees || {})) {
      cpSync(join(REPO, plain(tree)), join(home, plain(rel)), { recursive: true });
    }
    if (!a.corpus) continue;
    const from = join(SHARED, 'corpus', plain(a.corpus));
    for (const name of readdirSync(from).sort()) {
      if (name === 'SOURCES.md') continue;
      const dst = join(home, a.home ? plain(a.home) : '', ...name.split('__').map(plain));
      mkdirSync(dirname(dst), { recursive: true });
      copyFileSync(join(from, name), dst);
    }
  }
  return AGENTS.map((a) => a.source);
}

/**
 * Generates a home with gen.py (`sessions` source sessions, seed 1) and
 * plants the XSS transcript; with `agents`, also the real sessions of the
 * agents gen.py does not write (`plantAgents`). Returns the home directory.
 */
export function makeHome(dir, { sessions = 60, seed = 1, agents = false } = {}) {
  execFileSync('python3', [join(SHARED, 'corpus-gen/gen.py'), '--out', dir, '--seed', String(seed), '--sessions', String(sessions), '--force'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const home = join(dir, 'home');
  const project = join(home, '.claude/projects/-home-mara-code-xss-lab');
  mkdirSync(project, { recursive: true });
  copyFileSync(join(here, '../fixtures/xss-session.jsonl'), join(project, '5e55a0c1-0000-4000-8000-00000000a001.jsonl'));
  if (agents) plantAgents(home);
  return home;
}

/** A free loopback port. */
export function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

/** Runs `recall` to completion; returns stdout. */
export function recall(args, { input } = {}) {
  return execFileSync(BIN, args, { encoding: 'utf8', input, maxBuffer: 256 << 20, stdio: ['pipe', 'pipe', 'pipe'] });
}

/**
 * Starts `recall serve --home HOME` on a free port and waits until the first
 * backfill is done. Returns `{url, stop()}`.
 */
export async function serve(home, { port, argv } = {}) {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build it with cargo build -p recall-host`);
  port = port || (await freePort());
  // `argv` replaces the command (e.g. `['demo', '--dir', DIR]`); the bind is added.
  const args = [...(argv || ['--home', home, '--retention-days', '0', 'serve']), '--bind', `127.0.0.1:${port}`];
  const child = spawn(BIN, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`recall serve exited ${child.exitCode}: ${stderr}`);
    try {
      const s = await (await fetch(`${url}/api/index/status`)).json();
      if (s.ok && s.phase !== 'indexing' && s.phase !== 'idle' && !s.building) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`recall serve did not finish indexing: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const stop = () => new Promise((ok) => {
    if (child.exitCode !== null) return ok();
    child.once('exit', () => ok());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
  return { url, port, stop, child };
}

/**
 * Loads every shard into the server's memory (a broad query repeated until
 * it is no longer cut short by the 150 ms scan budget), so the answers the
 * tests compare are complete rather than `partial`.
 */
export async function warm(base) {
  const url = base.replace(/\/+$/, '');
  for (const q of ['e', 'the', 'a']) {
    for (let i = 0; i < 30; i += 1) {
      const body = await (await fetch(`${url}/api/sessions/message-search?q=${q}&scope=all&limit=100`)).json();
      if (body.state !== 'partial') break;
    }
  }
}

/** Launches headless Chromium (a fresh profile each time). */
export function launch() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * A browser context. With `RECALL_WEB_DIR` set (development only), static
 * files come from that folder instead of the binary's embedded copy, so web/
 * changes can be tried without rebuilding; service workers are blocked then.
 */
export async function newContext(browser) {
  const dev = process.env.RECALL_WEB_DIR;
  const ctx = await browser.newContext(dev ? { serviceWorkers: 'block' } : {});
  if (dev) {
    const { readFile } = await import('node:fs/promises');
    await ctx.route((u) => !u.pathname.startsWith('/api/') && u.protocol === 'http:', async (route) => {
      const u = new URL(route.request().url());
      let path = u.pathname === '/' ? '/index.html' : u.pathname === '/report' ? '/report.html' : u.pathname;
      const file = path.startsWith('/pkg/') ? join(REPO, path) : join(dev, path);
      try {
        const body = await readFile(file);
        const type = { html: 'text/html', js: 'text/javascript', css: 'text/css', wasm: 'application/wasm' }[path.split('.').pop()] || 'application/octet-stream';
        await route.fulfill({ body, contentType: type });
      } catch {
        await route.fulfill({ status: 404, body: 'not found' });
      }
    });
  }
  return ctx;
}

/** Opens a page that fails the test on any page error or dialog (alert). */
export async function openPage(browser, url, { context } = {}) {
  const ctx = context || (await newContext(browser));
  const page = await ctx.newPage();
  page.errors = [];
  page.dialogs = [];
  page.on('pageerror', (e) => page.errors.push(String(e)));
  page.on('dialog', (d) => {
    page.dialogs.push(d.message());
    d.dismiss().catch(() => {});
  });
  if (url) {
    await page.goto(url);
    await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
  }
  return page;
}

/** Removes a directory tree. */
export function cleanup(dir) {
  if (dir) rmSync(dir, { recursive: true, force: true });
}

/** Drops fields that legitimately differ between two runs (`took_ms`). */
export function comparable(body) {
  if (!body || typeof body !== 'object') return body;
  const { took_ms: _ignored, ...rest } = body;
  return rest;
}
