//! "Search the full logs": Deep Search from the dashboard. Streams
//! `GET /api/sessions/deep-search` (NDJSON: progress, one line per session
//! with matches, done) into a panel under the results — a progress bar with
//! files scanned, sessions as they arrive with each matching line's kind and
//! the matched field's text (text nodes, `<mark>` around the match), and a
//! Stop button that aborts the request (the server stops scanning when the
//! client goes away). A line that is an indexed record opens the session at
//! it. Only the daemon reads source files: offline copies and reports have
//! no such action.

import { h, replace, append } from './dom.js';
import { url } from './api.js';
import { snippetNode } from './highlight.js';
import { when } from './format.js';

const KIND = { user: 'You', assistant: 'Agent', reasoning: 'Reasoning', tool: 'Tool', other: 'Log' };
/** Filters of a message search that a deep search also takes. */
const FILTERS = ['source', 'cwd', 'since', 'until', 'model'];
/** Matching lines asked for at most. */
const MAX_RESULTS = 200;

/** The literal a query names: its text with the phrase quotes taken off. */
export function patternOf(q) {
  return (q || '').trim().replace(/^"(.*)"$/s, '$1');
}

export class DeepSearch {
  /** `root`: the panel; `onOpen(key, hit)` opens a session at a hit. */
  constructor(root, { onOpen }) {
    this.root = root;
    this.onOpen = onOpen;
    this.controller = null;
  }

  /** The button that starts a deep search for `req` (a message search request). */
  button(req) {
    const pattern = patternOf(req.q);
    return h('button', { type: 'button', class: 'deep-btn', onclick: () => this.run(req) },
      `Search the full logs for “${pattern}”`);
  }

  /** Stops a running deep search. */
  stop() {
    this.controller?.abort();
    this.controller = null;
  }

  /** Hides the panel (a new message search started). */
  clear() {
    this.stop();
    replace(this.root);
    this.root.hidden = true;
  }

  async run(req) {
    this.stop();
    const controller = new AbortController();
    this.controller = controller;
    const pattern = patternOf(req.q);
    const status = h('p', { class: 'deep-status', role: 'status' }, 'Searching the full logs…');
    const bar = h('progress', { max: 1, value: 0, 'aria-label': 'Files scanned' });
    const stop = h('button', { type: 'button', class: 'deep-stop', onclick: () => this.stop() }, 'Stop');
    const list = h('div', { class: 'deep-results' });
    replace(this.root, h('h2', { class: 'deep-title' }, `Full logs: “${pattern}”`), h('div', { class: 'deep-head' }, status, bar, stop), list);
    this.root.hidden = false;
    this.root.scrollIntoView?.({ block: 'nearest' });
    const params = { pattern, fixed_strings: 'true', ignore_case: 'true', max_results: MAX_RESULTS };
    for (const k of FILTERS) if (req[k]) params[k] = req[k];
    const done = (text, cls = 'deep-status') => {
      status.className = cls;
      status.textContent = text;
      stop.remove();
      bar.remove();
    };
    let found = 0;
    try {
      const res = await fetch(url('/api/sessions/deep-search', params), { signal: controller.signal, headers: { Accept: 'application/x-ndjson' } });
      if (!res.ok) {
        const body = await res.json().catch(() => null);
        done(res.status === 429 ? 'A deep search is already running; try again when it ends.' : `Deep Search failed: ${body?.message || res.status}`, 'error');
        return;
      }
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) break;
        buf += value;
        for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          if (!line.trim()) continue;
          const ev = JSON.parse(line);
          if (ev.type === 'progress') {
            bar.max = Math.max(1, ev.progress.files_total);
            bar.value = ev.progress.files_done;
            status.textContent = `Searching the full logs… ${ev.progress.files_done} of ${ev.progress.files_total} files`;
          } else if (ev.type === 'session') {
            found += ev.session.hits.length;
            append(list, [this.card(ev.session)]);
          } else if (ev.type === 'done') {
            const s = ev.summary;
            const lines = `${s.hits} matching line${s.hits === 1 ? '' : 's'} in ${s.sessions} session${s.sessions === 1 ? '' : 's'}`;
            const tail = s.truncated ? ` (stopped at ${MAX_RESULTS}; narrow the filters for the rest)` : '';
            const left = s.unreadable.length ? `; ${s.unreadable.length} file(s) could not be read` : '';
            done(s.hits ? `${lines}, ${s.progress.files_done} files scanned${tail}${left}.` : `No line of the ${s.progress.files_done} files scanned matches${left}.`);
          } else if (ev.type === 'error') {
            done(`Deep Search failed: ${ev.message}`, 'error');
          }
        }
      }
    } catch (e) {
      if (e?.name === 'AbortError') {
        done(`Stopped: ${found} matching line${found === 1 ? '' : 's'} so far.`);
        return;
      }
      done('Deep Search failed: the recall daemon cannot be reached.', 'error');
    } finally {
      if (this.controller === controller) this.controller = null;
    }
  }

  card(s) {
    const head = h('div', { class: 'deep-session-head' },
      h('span', { class: `badge src-${s.source}` }, s.source),
      h('span', { class: 'deep-session-title' }, s.title || s.session_key),
      s.updated_ms ? h('span', { class: 'when' }, when(s.updated_ms)) : null);
    const hits = s.hits.map((hit) => {
      const body = [h('span', { class: `deep-kind kind-${hit.kind}` }, KIND[hit.kind] || hit.kind), snippetNode(hit.text, 0, hit.highlights, 'deep-text')];
      if (hit.locator) {
        return h('li', {}, h('button', { type: 'button', class: 'deep-hit', title: 'Open the session at this record', onclick: () => this.onOpen(s.session_key, { locator: hit.locator }) }, ...body));
      }
      const where = hit.field ? `${hit.field}, line ${hit.line_no}` : `line ${hit.line_no}`;
      return h('li', { class: 'deep-hit' }, ...body, h('span', { class: 'deep-where' }, where));
    });
    return h('section', { class: 'deep-session', 'aria-label': s.title || s.session_key }, head, h('ul', { class: 'deep-hits' }, ...hits));
  }
}
