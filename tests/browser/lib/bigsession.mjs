// Writes one large Claude Code session (default 5 MB of transcript) with
// prose and tool traffic drawn from a vocabulary by a seeded PRNG, so its
// text compresses like real conversation rather than like repeated lines.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const WORDS = ('the of and to in is that for it with as was on be by this are or at from which have an not but they his '
  + 'index shard cursor manifest search query record session source parser extractor fold snippet highlight range byte '
  + 'offset wasm worker browser daemon publish sweep retention snapshot generation locator tombstone coverage subagent '
  + 'function return const let mut struct impl trait enum match some none ok err async await future stream buffer vec '
  + 'string slice iter map filter collect unwrap expect panic error result option clone borrow lifetime module crate test '
  + 'cargo build release debug profile bench criterion flamegraph alloc memory cache arena mmap file path dir read write '
  + 'straße σίσυφος istanbul cafés naïve 数据库 连接 한국어 かな emoji 🚀 — “quoted” ‘single’ … ellipsis').split(/\s+/);

function prng(seed) {
  let s = seed >>> 0;
  return () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s / 2 ** 32;
  };
}

/**
 * Writes `<home>/.claude/projects/-home-mara-code-big/<sid>.jsonl` of about
 * `bytes` bytes; returns the session key.
 */
export function writeBigSession(home, { bytes = 5_000_000, seed = 7 } = {}) {
  const rand = prng(seed);
  const sid = 'b16b16b1-0000-4000-8000-000000000005';
  const dir = join(home, '.claude/projects/-home-mara-code-big');
  mkdirSync(dir, { recursive: true });
  const words = (n) => Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');
  const lines = [];
  let size = 0;
  let parent = null;
  let t = Date.parse('2026-10-01T09:00:00Z');
  for (let i = 0; size < bytes; i += 1) {
    const uuid = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
    const base = { uuid, parentUuid: parent, sessionId: sid, cwd: '/home/mara/code/big', gitBranch: 'main', version: '2.1.39', timestamp: new Date(t).toISOString() };
    let line;
    const kind = i % 4;
    if (kind === 0) line = { type: 'user', ...base, message: { role: 'user', content: `${words(20 + Math.floor(rand() * 120))}` } };
    else if (kind === 1) line = { type: 'assistant', ...base, message: { id: `msg_${i}`, role: 'assistant', model: 'claude-opus-4-6', content: [{ type: 'text', text: words(60 + Math.floor(rand() * 400)) }, { type: 'tool_use', id: `toolu_${i}`, name: 'Bash', input: { command: `grep -rn ${words(2)} src/` } }] } };
    else if (kind === 2) line = { type: 'user', ...base, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i - 1}`, content: words(800 + Math.floor(rand() * 3000)) }] } };
    else line = { type: 'assistant', ...base, message: { id: `msg_${i}`, role: 'assistant', model: 'claude-opus-4-6', content: [{ type: 'text', text: words(30 + Math.floor(rand() * 200)) }] } };
    const text = `${JSON.stringify(line)}\n`;
    lines.push(text);
    size += Buffer.byteLength(text);
    parent = uuid;
    t += 20_000 + Math.floor(rand() * 60_000);
  }
  writeFileSync(join(dir, `${sid}.jsonl`), lines.join(''));
  return { key: `claude-code:${sid}`, bytes: size };
}
