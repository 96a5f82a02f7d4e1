//! Markdown rendering of user and assistant text: markdown-it (vendored,
//! `html: false`) parses, and the DOM is built from its TOKEN STREAM with
//! `createElement`/text nodes only — transcript text is never parsed as HTML.
//! Fenced code is highlighted by highlight.js (vendored core + a few
//! languages), whose token tree is also turned into spans and text nodes.
//! Links show their target; only http(s) links are clickable; images are shown
//! as text, never loaded.
//!
//! Highlights: every text node is mapped back to its place in the source
//! text (tokens are found in order from the block's first line), so `<mark>`s
//! land on the matched characters even inside emphasis, tables or code.
//! Text that cannot be found verbatim (entities, backslash escapes) is shown
//! without marks rather than with misplaced ones.

import '../vendor/markdown-it.min.js';
import hljs from '../vendor/highlight/core.min.js';
import bash from '../vendor/highlight/languages/bash.min.js';
import css from '../vendor/highlight/languages/css.min.js';
import diff from '../vendor/highlight/languages/diff.min.js';
import go from '../vendor/highlight/languages/go.min.js';
import javascript from '../vendor/highlight/languages/javascript.min.js';
import json from '../vendor/highlight/languages/json.min.js';
import plaintext from '../vendor/highlight/languages/plaintext.min.js';
import python from '../vendor/highlight/languages/python.min.js';
import rust from '../vendor/highlight/languages/rust.min.js';
import shell from '../vendor/highlight/languages/shell.min.js';
import sql from '../vendor/highlight/languages/sql.min.js';
import typescript from '../vendor/highlight/languages/typescript.min.js';
import xml from '../vendor/highlight/languages/xml.min.js';
import yaml from '../vendor/highlight/languages/yaml.min.js';

const LANGUAGES = { bash, css, diff, go, javascript, json, plaintext, python, rust, shell, sql, typescript, xml, yaml };
for (const [name, grammar] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, grammar);

const md = globalThis.markdownit({ html: false, linkify: true, typographer: false });
// Every link is parsed, `javascript:` included, so its target can be SHOWN;
// only http(s) targets become clickable (`safeHref`), and images are only
// ever shown as text.
md.validateLink = () => true;

/** Elements a token may create (anything else becomes a `div`). */
const TAGS = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'li', 'blockquote', 'table', 'thead',
  'tbody', 'tr', 'th', 'td', 'em', 'strong', 's', 'hr', 'br', 'code', 'pre']);

/** Whether `href` may be a clickable link. */
export function safeHref(href) {
  return /^https?:\/\//i.test(String(href || '').trim());
}

/**
 * Renders `text` as Markdown into a new `<div class="md">`. `marks` are
 * `[start, end)` string (UTF-16) index ranges into `text` to wrap in `<mark>`.
 */
export function renderMarkdown(text, marks = []) {
  const root = document.createElement('div');
  root.className = 'md';
  const src = String(text ?? '');
  const tokens = md.parse(src, {});
  const lineStarts = [0];
  for (let i = 0; i < src.length; i += 1) if (src.charCodeAt(i) === 10) lineStarts.push(i + 1);
  const state = { src, pos: 0, marks: [...marks].sort((a, b) => a[0] - b[0]), lineStarts };
  walkBlocks(tokens, root, state);
  return root;
}

/** Moves the source cursor to the first line of a block token. */
function seekLine(state, token) {
  if (token.map) state.pos = Math.max(state.pos, state.lineStarts[token.map[0]] ?? state.pos);
}

/** How far past the cursor a token's text is looked for (markup between tokens is short). */
const SLACK = 2048;
/** Code longer than this is shown without syntax highlighting (a huge paste stays fast). */
const MAX_HIGHLIGHT = 64 * 1024;

/**
 * Finds `content` in the source from the cursor; its start index or -1. The
 * search is bounded, so text that is not verbatim in the source (entities,
 * escapes) costs a short scan, not one to the end of a huge entry.
 */
function locate(state, content) {
  if (!content) return -1;
  const near = state.src.slice(state.pos, state.pos + content.length + SLACK);
  const rel = near.indexOf(content);
  if (rel < 0) return -1;
  const at = state.pos + rel;
  state.pos = at + content.length;
  return at;
}

/**
 * Appends `text` to `parent` as text nodes, with `<mark>` around the parts
 * that fall inside a highlight range. `start` is its index in the source
 * (-1 = not found: no marks).
 */
function emit(parent, text, start, state) {
  if (!text) return;
  if (start < 0 || !state.marks.length) {
    parent.append(document.createTextNode(text));
    return;
  }
  const end = start + text.length;
  let pos = 0;
  for (const [a, b] of state.marks) {
    const s = Math.max(a, start) - start;
    const e = Math.min(b, end) - start;
    if (e <= s || e <= pos) continue;
    const from = Math.max(s, pos);
    if (from > pos) parent.append(document.createTextNode(text.slice(pos, from)));
    const mark = document.createElement('mark');
    mark.textContent = text.slice(from, e);
    parent.append(mark);
    pos = e;
  }
  if (pos < text.length) parent.append(document.createTextNode(text.slice(pos)));
}

function element(tag, token) {
  const el = document.createElement(TAGS.has(tag) ? tag : 'div');
  if (tag === 'ol') {
    const start = Number(token.attrGet('start'));
    if (Number.isInteger(start) && start !== 1) el.start = start;
  }
  const style = token.attrGet?.('style') || '';
  const align = /text-align:(left|right|center)/.exec(style);
  if (align) el.className = `align-${align[1]}`;
  // A table scrolls sideways (display: block; overflow: auto): focusable.
  if (tag === 'table') el.tabIndex = 0;
  return el;
}

function walkBlocks(tokens, root, state) {
  const stack = [root];
  const top = () => stack[stack.length - 1];
  for (const t of tokens) {
    seekLine(state, t);
    // Paragraphs of tight lists are hidden: their text goes in the item.
    if (t.hidden && t.nesting !== 0) continue;
    if (t.nesting === 1) {
      const el = element(t.tag, t);
      top().append(el);
      stack.push(el);
    } else if (t.nesting === -1) {
      if (stack.length > 1) stack.pop();
    } else if (t.type === 'inline') {
      walkInline(t.children || [], top(), state);
    } else if (t.type === 'fence' || t.type === 'code_block') {
      top().append(codeBlock(t, state));
    } else if (t.type === 'hr') {
      top().append(document.createElement('hr'));
    } else if (t.content) {
      // html_block cannot occur with `html: false`; anything else unknown is text.
      const p = document.createElement('p');
      emit(p, t.content, locate(state, t.content), state);
      top().append(p);
    }
  }
}

function walkInline(tokens, parent, state) {
  const stack = [parent];
  const top = () => stack[stack.length - 1];
  // The target of each open link, shown after its text.
  const links = [];
  for (let i = 0; i < tokens.length; i += 1) {
    const t = tokens[i];
    switch (t.type) {
      case 'text':
      case 'html_inline':
        emit(top(), t.content, locate(state, t.content), state);
        break;
      case 'code_inline': {
        const code = document.createElement('code');
        emit(code, t.content, locate(state, t.content), state);
        top().append(code);
        break;
      }
      case 'softbreak':
        top().append(document.createTextNode('\n'));
        break;
      case 'hardbreak':
        top().append(document.createElement('br'));
        break;
      case 'link_open': {
        const href = t.attrGet('href') || '';
        let el;
        if (safeHref(href)) {
          el = document.createElement('a');
          el.href = href;
          el.target = '_blank';
          el.rel = 'noopener noreferrer nofollow';
          el.title = href;
        } else {
          el = document.createElement('span');
          el.className = 'link-inert';
          el.title = `Not a web link: ${href}`;
        }
        top().append(el);
        stack.push(el);
        links.push({ href, el, autolink: t.markup === 'linkify' || t.markup === 'autolink' });
        break;
      }
      case 'link_close': {
        if (stack.length > 1) stack.pop();
        const link = links.pop();
        // The target, unless the text already is it (autolinks).
        if (link && !link.autolink && link.el.textContent !== link.href) {
          const target = document.createElement('span');
          target.className = 'link-target';
          target.textContent = ` <${link.href}>`;
          top().append(target);
        }
        break;
      }
      case 'image': {
        const img = document.createElement('span');
        img.className = 'image-ref';
        const alt = (t.children || []).map((c) => c.content).join('');
        img.textContent = `[image: ${alt || 'no description'}] <${t.attrGet('src') || ''}>`;
        top().append(img);
        break;
      }
      default:
        if (t.nesting === 1) {
          const el = element(t.tag, t);
          top().append(el);
          stack.push(el);
        } else if (t.nesting === -1) {
          if (stack.length > 1) stack.pop();
        } else if (t.content) {
          emit(top(), t.content, locate(state, t.content), state);
        }
    }
  }
}

/**
 * A fenced or indented code block, highlighted when its language is known.
 * Each line is found in the source on its own (code inside a list item has
 * its indentation removed), then highlight.js's token tree is walked.
 */
function codeBlock(t, state) {
  const pre = document.createElement('pre');
  // It scrolls sideways: focusable, so a keyboard can scroll it (axe scrollable-region-focusable).
  pre.tabIndex = 0;
  const code = document.createElement('code');
  pre.append(code);
  const content = t.content.endsWith('\n') ? t.content.slice(0, -1) : t.content;
  const lang = (t.info || '').trim().split(/\s+/)[0].toLowerCase();
  // Where each line of `content` starts in the source (-1 = not found).
  const bases = [];
  for (const line of content.split('\n')) {
    const at = line ? locate(state, line) : state.pos;
    bases.push(at);
  }
  const lineStarts = [0];
  for (let i = 0; i < content.length; i += 1) if (content.charCodeAt(i) === 10) lineStarts.push(i + 1);
  // Emits `text` at `offset` in `content`, split at line ends.
  const put = (parent, text, offset) => {
    let off = offset;
    for (const piece of text.split(/(?<=\n)/)) {
      let line = 0;
      while (line + 1 < lineStarts.length && lineStarts[line + 1] <= off) line += 1;
      const base = bases[line];
      emit(parent, piece, base < 0 ? -1 : base + (off - lineStarts[line]), state);
      off += piece.length;
    }
  };
  let tree = null;
  if (lang && hljs.getLanguage(lang) && content.length <= MAX_HIGHLIGHT) {
    code.className = `hljs language-${lang}`;
    try {
      tree = hljs.highlight(content, { language: lang, ignoreIllegals: true })._emitter?.root || null;
    } catch {
      tree = null;
    }
  }
  if (!tree) {
    put(code, content, 0);
    return pre;
  }
  let offset = 0;
  const walk = (node, parent) => {
    for (const child of node.children || []) {
      if (typeof child === 'string') {
        put(parent, child, offset);
        offset += child.length;
      } else {
        const span = document.createElement('span');
        const scope = String(child.scope || '').replace(/[^\w.-]/g, '');
        if (scope) span.className = scope.split('.').map((s, i) => (i ? `${s}${'_'.repeat(i)}` : `hljs-${s}`)).join(' ');
        parent.append(span);
        walk(child, span);
      }
    }
  };
  walk(tree, code);
  // Whatever the tree left out (it should not) is still shown.
  if (offset < content.length) put(code, content.slice(offset), offset);
  return pre;
}
