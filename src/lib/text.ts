/**
 * `value` with every string in it, object keys included, in Unicode NFC. Text is stored and
 * compared in this one form, so that `café` typed as one code point or as `e` and a combining
 * accent is one value to search, filters and unique fields (docs/rules.md).
 */
export function toNfc<T>(value: T): T {
  if (typeof value === 'string') return value.normalize('NFC') as T;
  if (Array.isArray(value)) return value.map(toNfc) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.normalize('NFC'), toNfc(v)])) as T;
  }
  return value;
}
