//! Tool cards: a tool row of the session view drawn as what it did rather
//! than its raw arguments. The extractors store a tool call as one row,
//! `Name {json arguments}` (or `Name raw-arguments`), and its result as the
//! next tool row (plain text). `classify` names the kind of a call from the
//! tool name and its arguments — a shell command, a file edit, a file read or
//! write, a web fetch — and `toolCard` draws it: the command (and, on the
//! result row after it, the exit status when the source recorded one and the
//! output, folded after 20 lines), the edit as a unified diff, the path, the
//! URL. Anything else (an unknown tool, arguments cut by the 3 KB row cap that
//! no longer parse) returns null and keeps the raw view. Every string is set
//! as text through `dom.js`; no transcript text is ever parsed as HTML.

import { h } from './dom.js';

/** Output lines shown before "Show all". */
export const FOLD_LINES = 20;
/** Largest edit (old × new lines) diffed line by line; a bigger one shows every line as removed then added. */
const DIFF_CELLS = 250_000;

const SHELL = new Set(['bash', 'shell', 'exec_command', 'local_shell', 'run_shell_command', 'execute_command', 'run_terminal_cmd', 'shell_command', 'terminal', 'run_command']);
const EDIT = new Set(['edit', 'multiedit', 'replace', 'str_replace', 'str_replace_editor', 'edit_file', 'apply_patch', 'strreplacefile', 'patch']);
const WRITE = new Set(['write', 'write_file', 'create_file', 'writefile', 'write_to_file']);
const READ = new Set(['read', 'read_file', 'readfile', 'view', 'view_file', 'read_many_files']);
const FETCH = new Set(['webfetch', 'web_fetch', 'fetch', 'fetchurl', 'fetch_url', 'read_url']);

/** Splits a call row into `{name, args}` (`args` parsed JSON, a string, or null). */
export function parseCall(text) {
  const m = /^([A-Za-z_][\w.:-]{0,63})(?:\s+([\s\S]*))?$/.exec(String(text || ''));
  if (!m) return null;
  const raw = (m[2] || '').trim();
  let args = null;
  if (raw.startsWith('{') || raw.startsWith('[')) {
    try {
      args = JSON.parse(raw);
    } catch {
      return null; // cut by the row cap, or not JSON after all: the raw view
    }
  } else if (raw) {
    args = raw;
  }
  return { name: m[1], args };
}

const str = (v) => (typeof v === 'string' ? v : null);
const pick = (o, ...keys) => {
  for (const k of keys) if (o && typeof o === 'object' && str(o[k]) !== null) return o[k];
  return null;
};

/**
 * The kind of a tool call row: `{kind: 'shell', command}`, `{kind: 'edit',
 * path, edits: [{old, new}] | patch}`, `{kind: 'write', path, content}`,
 * `{kind: 'read', path}`, `{kind: 'fetch', url}`, or null (not a call this
 * knows; the raw view).
 */
export function classify(text) {
  const call = parseCall(text);
  if (!call) return null;
  const name = call.name.split(/[.:]/).pop().toLowerCase();
  const a = call.args;
  const obj = a && typeof a === 'object' && !Array.isArray(a) ? a : null;
  // Only a patch is ever a call with bare-text arguments: any other row that
  // starts with a word (`git diff --stat …`, `cat -n …`) is a result.
  if (!obj && !(EDIT.has(name) && typeof a === 'string')) return null;
  if (SHELL.has(name)) {
    let command = obj.command ?? obj.cmd ?? obj.script;
    if (Array.isArray(command)) {
      // ["bash", "-lc", "ls -la"] → the script itself
      command = command.length === 3 && /^(ba|z)?sh$/.test(command[0]) && /^-l?c$/.test(command[1]) ? command[2] : command.join(' ');
    }
    if (typeof command !== 'string' || !command) return null;
    return { kind: 'shell', name: call.name, command, description: pick(obj, 'description') };
  }
  if (EDIT.has(name)) {
    if (typeof a === 'string' && /^\*\*\* Begin Patch|^(---|\+\+\+|@@) /m.test(a)) return { kind: 'edit', name: call.name, path: patchPath(a), patch: a };
    const patch = pick(obj, 'patch', 'input', 'diff');
    if (patch && /^\*\*\* Begin Patch|^@@ /m.test(patch)) return { kind: 'edit', name: call.name, path: patchPath(patch), patch };
    const path = pick(obj, 'file_path', 'path', 'filePath', 'absolute_path', 'file');
    if (!path) return null;
    const one = (e) => ({ old: str(e?.old_string ?? e?.old_str ?? e?.oldText ?? e?.old) ?? '', new: str(e?.new_string ?? e?.new_str ?? e?.newText ?? e?.new) ?? '' });
    const edits = Array.isArray(obj.edits) ? obj.edits.map(one) : [one(obj)];
    if (!edits.some((e) => e.old || e.new)) return null;
    return { kind: 'edit', name: call.name, path, edits };
  }
  if (WRITE.has(name)) {
    const path = pick(obj, 'file_path', 'path', 'filePath', 'absolute_path', 'file');
    if (!path) return null;
    return { kind: 'write', name: call.name, path, content: pick(obj, 'content', 'contents', 'text') ?? '' };
  }
  if (READ.has(name)) {
    const path = pick(obj, 'file_path', 'path', 'filePath', 'absolute_path', 'file');
    if (!path) return null;
    const range = obj && (obj.offset !== undefined || obj.limit !== undefined)
      ? `lines ${Number(obj.offset) || 1}${obj.limit ? `–${(Number(obj.offset) || 1) + Number(obj.limit) - 1}` : '+'}`
      : null;
    return { kind: 'read', name: call.name, path, range };
  }
  if (FETCH.has(name)) {
    const url = pick(obj, 'url', 'uri', 'href');
    if (!url) return null;
    return { kind: 'fetch', name: call.name, url, prompt: pick(obj, 'prompt') };
  }
  return null;
}

/** The first file a patch names (`*** Update File: x`, `+++ b/x`), or ''. */
function patchPath(patch) {
  const m = /^\*\*\* (?:Update|Add|Delete) File: (.+)$/m.exec(patch) || /^\+\+\+ (?:b\/)?(.+)$/m.exec(patch);
  return m ? m[1].trim() : '';
}

/**
 * A line diff of `a` → `b` as `[[op, line]]` (op ' ', '-', '+'), by longest
 * common subsequence; past `DIFF_CELLS` every old line is removed and every
 * new line added.
 */
export function lineDiff(a, b) {
  const x = a === '' ? [] : a.split('\n');
  const y = b === '' ? [] : b.split('\n');
  if (x.length * y.length > DIFF_CELLS) return [...x.map((l) => ['-', l]), ...y.map((l) => ['+', l])];
  const n = x.length;
  const m = y.length;
  const L = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i -= 1) for (let j = m - 1; j >= 0; j -= 1) L[i][j] = x[i] === y[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) {
      out.push([' ', x[i]]);
      i += 1;
      j += 1;
    } else if (L[i + 1][j] >= L[i][j + 1]) out.push(['-', x[i++]]);
    else out.push(['+', y[j++]]);
  }
  while (i < n) out.push(['-', x[i++]]);
  while (j < m) out.push(['+', y[j++]]);
  return out;
}

/** The exit status a shell result records (`Exit code: 1`, `{"metadata":{"exit_code":1}}` …), or null. */
export function exitStatus(text) {
  const t = String(text || '');
  const m = /^(?:Exit code|Process exited with code|exit code|Exit status|exit_code)[:=]?\s*(-?\d+)/im.exec(t.slice(0, 400));
  if (m) return Number(m[1]);
  if (t.startsWith('{')) {
    try {
      const v = JSON.parse(t);
      const code = v?.metadata?.exit_code ?? v?.exit_code ?? v?.exitCode;
      if (Number.isInteger(code)) return code;
    } catch {
      // not JSON
    }
  }
  return null;
}

/**
 * The output of a shell result: the `output` of a JSON result, the text
 * after `Output:` of a headed one (`Exit code: 0`, `Wall time: …`), else the text.
 */
function outputText(text) {
  const t = String(text || '');
  const headed = /^(?:(?:Chunk ID|Exit code|Wall time|Process exited with code|Original token count)[^\n]*\n)+Output:\n/.exec(t);
  if (headed) return t.slice(headed[0].length);
  if (t.startsWith('{')) {
    try {
      const v = JSON.parse(t);
      if (typeof v?.output === 'string') return v.output;
    } catch {
      // not JSON
    }
  }
  return t;
}

/** A `<pre>` of `lines`, folded after `FOLD_LINES` with a button to show the rest. */
function folded(lines, cls, line = (l) => l) {
  const pre = h('pre', { class: `tool-out ${cls}`, tabIndex: 0 });
  const fill = (all) => {
    pre.replaceChildren();
    const shown = all ? lines : lines.slice(0, FOLD_LINES);
    shown.forEach((l, i) => {
      pre.append(line(l));
      if (i + 1 < shown.length) pre.append('\n');
    });
  };
  fill(false);
  if (lines.length <= FOLD_LINES) return pre;
  const more = h('button', { type: 'button', class: 'tool-more', 'aria-expanded': 'false' }, `Show all ${lines.length} lines`);
  more.addEventListener('click', () => {
    const all = more.getAttribute('aria-expanded') !== 'true';
    fill(all);
    more.setAttribute('aria-expanded', String(all));
    more.textContent = all ? `Show the first ${FOLD_LINES} lines` : `Show all ${lines.length} lines`;
  });
  return h('div', { class: 'tool-fold' }, pre, more);
}

function head(kind, label, ...rest) {
  return h('div', { class: 'tool-head' }, h('span', { class: `tool-kind kind-${kind}` }, label), ...rest);
}

/** A unified diff of an edit's replacements (or the patch as written). */
function diffNode(call) {
  const rows = [];
  if (call.patch) {
    for (const l of call.patch.split('\n')) rows.push([l.startsWith('+') && !l.startsWith('+++') ? '+' : l.startsWith('-') && !l.startsWith('---') ? '-' : l.startsWith('@@') ? '@' : ' ', l, true]);
  } else {
    rows.push(['h', `--- a/${call.path}`, true], ['h', `+++ b/${call.path}`, true]);
    for (const e of call.edits) {
      const d = lineDiff(e.old, e.new);
      rows.push(['@', `@@ -${e.old ? e.old.split('\n').length : 0} +${e.new ? e.new.split('\n').length : 0} lines @@`, true]);
      for (const [op, l] of d) rows.push([op, op + l, true]);
    }
  }
  const cls = { '+': 'add', '-': 'del', '@': 'hunk', h: 'file', ' ': 'ctx' };
  return folded(rows, 'diff', ([op, l]) => h('span', { class: `line ${cls[op]}` }, l));
}

/**
 * The card of a tool row, or null for the raw view. `prev` is the entry
 * before it on the page: a result row right after a shell call is drawn as
 * that command's output.
 */
export function toolCard(entry, prev = null) {
  const text = entry?.text ?? '';
  const call = classify(text);
  const path = (p) => h('code', { class: 'tool-path' }, p);
  if (call?.kind === 'shell') {
    return h('div', { class: 'text tool-card kind-shell' },
      head('shell', 'Shell', call.description ? h('span', { class: 'tool-desc' }, call.description) : null),
      h('pre', { class: 'tool-cmd', tabIndex: 0 }, h('span', { class: 'prompt', 'aria-hidden': 'true' }, '$ '), call.command));
  }
  if (call?.kind === 'edit') {
    return h('div', { class: 'text tool-card kind-edit' }, head('edit', 'Edit', path(call.path || '(patch)')), diffNode(call));
  }
  if (call?.kind === 'write') {
    const lines = call.content.split('\n');
    return h('div', { class: 'text tool-card kind-write' },
      head('write', 'Write', path(call.path), h('span', { class: 'tool-desc' }, `${lines.length} ${lines.length === 1 ? 'line' : 'lines'}`)),
      call.content ? folded(lines, 'content') : null);
  }
  if (call?.kind === 'read') {
    return h('div', { class: 'text tool-card kind-read' }, head('read', 'Read', path(call.path), call.range ? h('span', { class: 'tool-desc' }, call.range) : null));
  }
  if (call?.kind === 'fetch') {
    return h('div', { class: 'text tool-card kind-fetch' },
      head('fetch', 'Fetch', h('code', { class: 'tool-url' }, call.url)),
      call.prompt ? h('div', { class: 'tool-desc' }, call.prompt) : null);
  }
  const parsed = parseCall(text);
  if (parsed && parsed.args && typeof parsed.args === 'object') return null; // a call to a tool without a card
  // A result: the output of the shell call just before it.
  const before = prev && prev.role === 'tool' ? classify(prev.text) : null;
  if (before?.kind === 'shell') {
    const status = exitStatus(text);
    const out = outputText(text).replace(/\n$/, '');
    const lines = out === '' ? [] : out.split('\n');
    return h('div', { class: 'text tool-card kind-output' },
      head('output', 'Output',
        status === null ? null : h('span', { class: `exit ${status === 0 ? 'ok' : 'fail'}` }, `exit ${status}`),
        h('span', { class: 'tool-desc' }, `${lines.length} ${lines.length === 1 ? 'line' : 'lines'}${entry.truncated ? ' (cut)' : ''}`)),
      lines.length ? folded(lines, 'output') : null);
  }
  return null;
}
