// The byte-range → string-index conversion of web/js/highlight.js, checked in
// Node (no browser) against Buffer slicing, on text with 2-, 3- and 4-byte
// UTF-8 characters (UTF-16 surrogate pairs included).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { byteToIndex, pieces } from '../../web/js/highlight.js';

const text = 'Straße 😀 数据库 cafe\u0301 ｆｉｌｅ end';

function byteRange(str, needle) {
  const b = Buffer.from(str);
  const at = b.indexOf(Buffer.from(needle));
  return [at, at + Buffer.byteLength(needle)];
}

test('byte offsets map to string indices on character boundaries', () => {
  for (const needle of ['ß', '😀', '数据库', 'cafe\u0301', 'ｆｉｌｅ', 'end']) {
    const [s, e] = byteRange(text, needle);
    const [i, j] = byteToIndex(text, [s, e]);
    assert.equal(text.slice(i, j), needle);
  }
  // An offset inside a multi-byte character moves back to its start.
  const [s] = byteRange(text, '😀');
  assert.deepEqual(byteToIndex(text, [s + 2]), byteToIndex(text, [s]));
  // Out-of-range offsets are clamped.
  assert.deepEqual(byteToIndex(text, [-5, 10_000]), [0, text.length]);
});

test('pieces highlight ranges relative to the snippet offset, clipped and in order', () => {
  const original = `prefix ${text}`;
  const off = Buffer.byteLength('prefix ');
  const snippet = text;
  const r1 = byteRange(original, '😀');
  const r2 = byteRange(original, '数据库');
  const outside = [0, 3]; // before the snippet: dropped
  const straddle = [off - 2, off + 3]; // clipped to the snippet's start: "Str"
  const got = pieces(snippet, off, [outside, straddle, r1, r2]);
  assert.equal(got.map((p) => p.text).join(''), snippet);
  assert.deepEqual(got.filter((p) => p.hit).map((p) => p.text), ['Str', '😀', '数据库']);
});
