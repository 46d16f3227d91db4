// Checks on a JSON body's bytes that JSON.parse does not make: keys given twice in one object.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** An open object or array: the path to it, and for an object the keys it has so far. */
interface Frame {
  object: boolean;
  path: string;
  /** The object's first key; the set is made at its second, so that nesting costs no sets. */
  first: string | undefined;
  keys: Set<string> | undefined;
  /** The key whose value is being read, which a nested container is found under. */
  lastKey: string;
}

const WHITE_SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/**
 * The path of the first key an object of this already parsed JSON has twice (`title`, `a.b`), or
 * undefined: JSON.parse keeps the last value, a proxy may keep the first. One pass over the bytes;
 * only keys with an escape are decoded (`"titl\u0065"` is `title`).
 */
export function duplicateKey(buf: Buffer): string | undefined {
  const stack: Frame[] = [];
  let top: Frame | undefined;
  const n = buf.length;
  for (let i = 0; i < n; i++) {
    const b = buf[i];
    if (b === QUOTE) {
      const start = i + 1;
      // The closing quote: the next one after an even number of backslashes (native search, so
      // that long values cost little).
      for (i = start; ; i++) {
        // Short strings (keys, most values) by hand: a native call costs more than their bytes.
        const near = Math.min(i + 32, n);
        while (i < near && buf[i] !== QUOTE) i++;
        if (i === near) i = buf.indexOf(QUOTE, i);
        if (i === -1) return undefined;
        let k = i - 1;
        while (k >= start && buf[k] === BACKSLASH) k--;
        if ((i - 1 - k) % 2 === 0) break;
      }
      if (!top?.object) continue;
      // A string is a key when a colon follows it (after white space).
      let j = i + 1;
      while (j < n && WHITE_SPACE.has(buf[j])) j++;
      if (buf[j] !== COLON) continue;
      const raw = buf.toString('utf8', start, i);
      const key = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
      if (top.first === undefined) top.first = key;
      else {
        top.keys ??= new Set([top.first]);
        if (top.keys.has(key)) return top.path ? `${top.path}.${key}` : key;
        top.keys.add(key);
      }
      top.lastKey = key;
    } else if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
      const path = !top ? '' : !top.object ? top.path : top.path ? `${top.path}.${top.lastKey}` : top.lastKey;
      top = { object: b === OPEN_OBJECT, path, first: undefined, keys: undefined, lastKey: '' };
      stack.push(top);
    } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
      stack.pop();
      top = stack[stack.length - 1];
    }
  }
  return undefined;
}
