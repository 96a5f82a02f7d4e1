//! A small promise wrapper over IndexedDB for the offline copy of the index:
//! store `meta` holds the manifest bytes and the segment list, store
//! `segments` the index segment files and store `generations` the generation
//! files, each by name. Usable from the page and from the search worker.

const DB_NAME = 'recall-offline';
const VERSION = 2;
const STORES = ['meta', 'segments', 'generations'];

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

let opened = null;

/** Opens (and on first use creates) the database. */
export function open() {
  if (!opened) {
    const req = indexedDB.open(DB_NAME, VERSION);
    req.onupgradeneeded = () => {
      const db = req.result;
      for (const name of STORES) {
        if (!db.objectStoreNames.contains(name)) db.createObjectStore(name);
      }
    };
    opened = request(req);
  }
  return opened;
}

/** Reads one value (or undefined). */
export async function get(store, key) {
  const db = await open();
  return request(db.transaction(store).objectStore(store).get(key));
}

/** Writes one value. */
export async function put(store, key, value) {
  const db = await open();
  const tx = db.transaction(store, 'readwrite');
  tx.objectStore(store).put(value, key);
  return done(tx);
}

/** Deletes keys. */
export async function remove(store, keys) {
  const db = await open();
  const tx = db.transaction(store, 'readwrite');
  for (const k of keys) tx.objectStore(store).delete(k);
  return done(tx);
}

/** Every key of a store. */
export async function keys(store) {
  const db = await open();
  return request(db.transaction(store).objectStore(store).getAllKeys());
}

/** Clears every store. */
export async function clearAll() {
  const db = await open();
  const tx = db.transaction(STORES, 'readwrite');
  for (const name of STORES) tx.objectStore(name).clear();
  return done(tx);
}

function done(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error || new Error('transaction aborted'));
  });
}
