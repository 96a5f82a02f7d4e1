// Independent references the browser's rendering is checked against.

/**
 * The highlighted pieces of a hit, computed with Node's UTF-8 Buffer (not
 * the page's code): the text of each `[start, end]` byte range clipped to
 * the snippet, merged in order.
 */
export function expectedMarks(hit) {
  const snippet = Buffer.from(hit.snippet, 'utf8');
  const off = hit.snippet_offset_bytes;
  const out = [];
  for (const [s, e] of hit.ranges) {
    const a = Math.max(0, s - off);
    const b = Math.min(snippet.length, e - off);
    if (b > a) out.push(snippet.subarray(a, b).toString('utf8'));
  }
  return out;
}

/** Waits until `fn()` (async) returns a truthy value, or throws after `ms`. */
export async function until(fn, ms = 10_000, what = 'condition') {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
