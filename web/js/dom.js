//! Safe DOM building. Every piece of transcript text goes through here as a
//! text node (`textContent`), never as HTML: a transcript holding
//! `<img src=x onerror=…>` or `<script>` shows those characters.

/**
 * Creates an element. `attrs` sets properties or attributes (`class`,
 * `dataset`, `on*` listeners, `aria-*`); children are nodes or strings
 * (strings become text nodes). Never parses HTML.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2), value);
    } else if (key in el && !key.includes('-')) el[key] = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

/** Appends children (nodes, strings, arrays, null) to `el`. */
export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Removes every child of `el`, then appends `children`. */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** `document.getElementById`, throwing a clear error when it is missing. */
export function byId(id) {
  const el = document.getElementById(id);
  if (!el) throw new Error(`missing element #${id}`);
  return el;
}
