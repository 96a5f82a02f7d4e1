// The dashboard's service worker: keeps the app shell and the wasm core
// (`pkg/`) cached so the page loads and searches its offline copy while the
// daemon is stopped. Static files are fetched network-first (a running daemon
// always serves its current build) and fall back to the cache; the API is
// never cached here: the offline copy lives in the Cache API store
// `recall-offline-v1`, written by the wasm core itself, which activation keeps.

// The server fills in the version (a hash of the shell) and the shell list
// (every embedded page, script, style and wasm file: host/src/assets.rs), so
// a file added to web/ is cached without editing this one.
const VERSION = 'dev';
const CACHE = `recall-app-${VERSION}`;
const OFFLINE_COPY = 'recall-offline-';
const SHELL = [/* SHELL */];

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((c) => c.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches.keys()
      .then((names) => Promise.all(names.filter((n) => n !== CACHE && !n.startsWith(OFFLINE_COPY)).map((n) => caches.delete(n))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (event) => {
  const req = event.request;
  const url = new URL(req.url);
  if (req.method !== 'GET' || url.origin !== location.origin || url.pathname.startsWith('/api/')) return;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    try {
      const res = await fetch(req);
      if (res.ok) cache.put(url.pathname === '/' ? '/' : req, res.clone());
      return res;
    } catch (e) {
      const hit = await cache.match(url.pathname === '/' ? '/' : req, { ignoreSearch: true });
      if (hit) return hit;
      throw e;
    }
  })());
});
