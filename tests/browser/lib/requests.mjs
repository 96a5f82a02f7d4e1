// A deterministic mix of search requests for parity runs: words common and
// rare, phrases, the DESIGN §3 fold cases, §13's expressions, and every filter.

const WORDS = [
  'websocket', 'slidingWindowLimiter', 'hashedSuffixFallback', 'Mobilgeräte', 'ブランチ', 'gemini', 'copilot', 'qwen',
  'the', 'error', 'test', 'file', 'fn', 'cargo', 'build', 'config', 'path', 'index', 'fix', 'session', 'return',
  'strasse', 'STRASSE', 'σίσυφος', 'istanbul', 'cafes', 'file', 'don\'t', 'a-b', '数据库', '하', 'か', 'xsscanary',
  '"the test"', 'error the', 'use std', '"let mut"', 'ledger', 'sync', 'http', 'json', 'main', 'todo', 'panic',
  // The query grammar: OR, groups, exclusions, whole words, inline filters, and its errors.
  'error OR panic', '(cargo | build) test', 'fix -test', 'w:fix', '=index', 'the role:user', 'error source:codex',
  'todo -"the test"', 'http://x', 'f(x)', '(panic', 'json OR', '-the',
];

const FILTERS = [
  {},
  { sort: 'relevance' },
  { source: 'codex' },
  { source: 'claude-code,pi' },
  { source: 'kimi,intendant' },
  { source: 'gemini,copilot' },
  { source: 'qwen,opencode' },
  { source: 'opencode', scope: 'all' },
  { scope: 'all' },
  { scope: 'all', role: 'tool' },
  { role: 'user' },
  { role: 'assistant', sort: 'relevance' },
  { include_superseded: 'false' },
  { subagents: 'false' },
  { limit: '5' },
  { since: '2026-10-01' },
  { until: '2026-09-01T00:00:00Z' },
  { cwd: '/home/mara/code' },
];

/** At least `n` requests, deterministic. */
export function requestMix(n = 200) {
  const out = [];
  for (let i = 0; out.length < n; i += 1) {
    const q = WORDS[i % WORDS.length];
    const f = FILTERS[(i * 7 + Math.floor(i / WORDS.length)) % FILTERS.length];
    out.push({ q, ...f });
  }
  // Error answers must agree too.
  out.push({ q: '' }, { q: 'x', source: 'nope' }, { q: 'x', role: 'tool' }, { q: 'a b c d e f g h i j k l m n o p q' });
  return out;
}
