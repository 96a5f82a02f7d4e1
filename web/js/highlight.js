//! Highlights a hit's snippet from the server's `ranges`.
//!
//! `ranges` are UTF-8 byte offsets into the ORIGINAL record text and
//! `snippet_offset_bytes` is where the snippet starts in it, so a range maps
//! into the snippet at `[start - offset, end - offset]` bytes. JavaScript
//! strings index UTF-16 code units, so the byte offsets are converted by
//! decoding the UTF-8 prefix (correct for any non-ASCII text: CJK, emoji,
//! combining marks).

import { h } from './dom.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Converts UTF-8 byte offsets of `text` to string (UTF-16) indices. Offsets
 * are clamped to the text; an offset inside a multi-byte char moves back to
 * the char's start.
 */
export function byteToIndex(text, offsets) {
  const bytes = encoder.encode(text);
  return offsets.map((b) => {
    let at = Math.max(0, Math.min(bytes.length, b | 0));
    while (at > 0 && at < bytes.length && (bytes[at] & 0xc0) === 0x80) at -= 1;
    return decoder.decode(bytes.subarray(0, at)).length;
  });
}

/**
 * Splits `snippet` into plain and highlighted pieces:
 * `[{text, hit: boolean}]`. `ranges` are byte ranges into the original text;
 * `offset` is the snippet's byte offset in it.
 */
export function pieces(snippet, offset, ranges) {
  const size = encoder.encode(snippet).length;
  const local = [];
  for (const [s, e] of ranges || []) {
    const a = s - offset;
    const b = Math.min(e - offset, size);
    if (b <= 0 || a >= size || b <= a) continue;
    local.push([Math.max(0, a), b]);
  }
  local.sort((x, y) => x[0] - y[0]);
  const flat = byteToIndex(snippet, local.flat());
  const out = [];
  let pos = 0;
  for (let i = 0; i < flat.length; i += 2) {
    const a = Math.max(flat[i], pos);
    const b = flat[i + 1];
    if (b <= a) continue;
    if (a > pos) out.push({ text: snippet.slice(pos, a), hit: false });
    out.push({ text: snippet.slice(a, b), hit: true });
    pos = b;
  }
  if (pos < snippet.length) out.push({ text: snippet.slice(pos), hit: false });
  return out;
}

/** A `<span>` with the snippet as text nodes and `<mark>` around the hits. */
export function snippetNode(snippet, offset, ranges, className = 'snippet') {
  const parts = pieces(snippet, offset, ranges).map((p) =>
    p.hit ? h('mark', {}, p.text) : p.text,
  );
  return h('span', { class: className }, ...parts);
}
