//! The team hosts this page has seen (`serve --remote`): every answer's
//! `hosts` block and every stamped `host: {id, name}` are remembered by id,
//! so a host is labelled by its name, by `name (id)` when another host seen
//! has the same name, or by its id when it has none. Labels are plain
//! strings: callers set them as text.

/** host id → name, for every host seen. */
const names = new Map();

/** Remembers hosts (`[{id, name}]`, or one `{id, name}`); others are ignored. */
export function rememberHosts(hosts) {
  for (const x of Array.isArray(hosts) ? hosts : [hosts]) {
    if (x && typeof x.id === 'string' && x.id) {
      const name = typeof x.name === 'string' ? x.name : '';
      if (name || !names.has(x.id)) names.set(x.id, name);
    }
  }
}

/** Whether a host other than `id` seen has the name `name`. */
export function nameCollides(id, name) {
  if (!name) return false;
  for (const [other, n] of names) if (other !== id && n === name) return true;
  return false;
}

/** The label of `host` (`{id, name}`): its name, with its id when that name is not unique. */
export function hostLabel(host) {
  if (!host || !host.id) return '';
  rememberHosts(host);
  const name = host.name || names.get(host.id) || '';
  if (!name) return host.id;
  return nameCollides(host.id, name) ? `${name} (${host.id})` : name;
}
