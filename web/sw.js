// The dashboard's service worker: keeps the app shell and the wasm core
// (`pkg/`) cached so the page loads and searches its offline copy while the
// daemon is stopped. Static files are fetched network-first (a running daemon
// always serves its current build) and fall back to the cache; the API is
// never cached here: the offline copy lives in the Cache API store
// `recall-offline-v1`, written by the wasm core itself, which activation keeps.

const CACHE = 'recall-app-v3';
const OFFLINE_COPY = 'recall-offline-';
const SHELL = [
  '/', '/index.html', '/report.html', '/css/app.css',
  '/js/app.js', '/js/api.js', '/js/bundle.js', '/js/dom.js', '/js/engine.js', '/js/filters.js', '/js/format.js',
  '/js/highlight.js', '/js/offline.js', '/js/palette.js', '/js/results.js',
  '/js/report.js', '/js/search-worker.js', '/js/session.js', '/js/home.js', '/js/markdown.js', '/js/live.js', '/js/session-actions.js',
  '/vendor/markdown-it.min.js', '/vendor/highlight/core.min.js',
  ...['bash', 'css', 'diff', 'go', 'javascript', 'json', 'plaintext', 'python', 'rust', 'shell', 'sql', 'typescript', 'xml', 'yaml']
    .map((l) => `/vendor/highlight/languages/${l}.min.js`),
  '/pkg/recall_core.js', '/pkg/recall_core_bg.wasm',
];

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
