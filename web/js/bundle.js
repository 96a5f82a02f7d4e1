//! Report bundles: a report file carries its shards as one gzip-compressed,
//! base64-encoded JSON payload `{"manifest": "<manifest.json>",
//! "generations": [["<name>.json", "<exact shard JSON>"], …]}` in a
//! `<script type="application/x-recall-data">` element (inert: never run).
//! This module decodes payloads (with the browser's `DecompressionStream`),
//! reads them out of other report files chosen in a file picker, and merges
//! several into one manifest.

/** The element type that carries a report's data. */
export const DATA_TYPE = 'application/x-recall-data';
/** The element type that carries the gzip+base64 wasm core. */
export const WASM_TYPE = 'application/x-recall-wasm';

/** Base64 → bytes. */
export function fromBase64(text) {
  const bin = atob(text.replace(/\s+/g, ''));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i += 1) out[i] = bin.charCodeAt(i);
  return out;
}

/** Gunzips bytes. */
export async function gunzip(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** Decodes one payload (base64 text) → `{query, manifest, generations}` (bytes). */
export async function decodePayload(text) {
  const json = new TextDecoder().decode(await gunzip(fromBase64(text)));
  const payload = JSON.parse(json);
  const enc = new TextEncoder();
  if (typeof payload.manifest !== 'string' || !Array.isArray(payload.generations)) {
    throw new Error('this is not a recall report payload');
  }
  return {
    query: typeof payload.query === 'string' ? payload.query : null,
    manifest: enc.encode(payload.manifest),
    generations: payload.generations.map(([name, body]) => [name, enc.encode(body)]),
  };
}

/** The payload text of a report document (this page or a parsed file), or null. */
export function payloadText(doc) {
  return doc.querySelector(`script[type="${DATA_TYPE}"]`)?.textContent || null;
}

/** Reads the payload out of a report file's HTML without running it. */
export async function payloadOfFile(file) {
  const html = await file.text();
  const doc = new DOMParser().parseFromString(html, 'text/html');
  const text = payloadText(doc);
  if (!text) throw new Error(`${file.name} is not a recall report`);
  return decodePayload(text);
}

/**
 * Merges manifests (parsed objects): the union of their sessions (for a key
 * in several, the one updated last), the highest revision, and the first
 * store id. Returns the merged manifest's bytes.
 */
export function mergeManifests(manifests) {
  const merged = { ...manifests[0], sessions: {}, tombstones: {} };
  for (const m of manifests) {
    merged.revision = Math.max(merged.revision || 0, m.revision || 0);
    for (const [key, entry] of Object.entries(m.sessions || {})) {
      const have = merged.sessions[key];
      if (!have || (entry.updated_ms ?? 0) > (have.updated_ms ?? 0)) merged.sessions[key] = entry;
    }
  }
  merged.sessions = Object.fromEntries(Object.entries(merged.sessions).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return new TextEncoder().encode(JSON.stringify(merged));
}
