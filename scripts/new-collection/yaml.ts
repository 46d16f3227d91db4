// YAML in the hand-written spec's own style, for a person to read and edit: block mappings, with
// `$ref`s, one-line schemas, scalar lists and examples written inline as the spec writes them.
import { parse } from 'yaml';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonMap = { [key: string]: Json };

/** An inline mapping longer than this is written as a block. */
const FLOW_WIDTH = 160;

function isMap(v: Json): v is JsonMap {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const isScalar = (v: Json) => v === null || typeof v !== 'object';
const isRef = (v: Json) => isMap(v) && Object.keys(v).length === 1 && typeof v.$ref === 'string';

/** A scalar as YAML 1.1 and 1.2 parsers both read it back: quoted whenever plain could mean something else. */
export function scalar(v: null | boolean | number | string, flow: boolean): string {
  if (typeof v !== 'string') return String(v);
  const plain =
    v !== '' &&
    v === v.trim() &&
    /^[\x20-\x7e]+$/.test(v) &&
    !/^[-?:](\s|$)/.test(v) &&
    !/^[,[\]{}#&*!|>'"%@`]/.test(v) &&
    !/^[-+.]?[0-9]/.test(v) &&
    !/^(true|false|null|yes|no|on|off|y|n|~)$/i.test(v) &&
    !v.includes(': ') &&
    !v.includes(' #') &&
    !v.endsWith(':') &&
    // Inline, a URL is quoted as the spec quotes it; `posts:read` is not.
    !(flow && (/[,[\]{}]/.test(v) || /:(\s|$|\/)/.test(v)));
  if (plain) return v;
  if (/^[\x20-\x7e]*$/.test(v)) return `'${v.replace(/'/g, "''")}'`;
  return JSON.stringify(v);
}

function flowValue(v: Json): string {
  if (isScalar(v)) return scalar(v, true);
  if (Array.isArray(v)) return `[${v.map(flowValue).join(', ')}]`;
  const entries = Object.entries(v).map(([k, x]) => `${scalar(k, true)}: ${flowValue(x)}`);
  return entries.length ? `{ ${entries.join(', ')} }` : '{}';
}

/** Inline as the spec writes them: `$ref`s, and schemas whose values are scalars, scalar lists or `$ref`s. */
function inline(key: string, v: Json): boolean {
  if (key === 'example') return true;
  if (isScalar(v)) return true;
  if (Array.isArray(v)) return v.every(isScalar);
  return isRef(v) || ('type' in v && Object.values(v).every((x) => isScalar(x) || (Array.isArray(x) && x.every(isScalar)) || isRef(x)));
}

function block(map: JsonMap, indent: number): string[] {
  const pad = ' '.repeat(indent);
  return Object.entries(map).flatMap(([key, v]) => entry(`${pad}${scalar(key, false)}:`, key, v, indent));
}

/** `head` is `key:` at its indentation, or `- key:` for a sequence item's first entry. */
function entry(head: string, key: string, v: Json, indent: number): string[] {
  if (typeof v === 'string' && v.includes('\n')) {
    const body = v.endsWith('\n') ? v.slice(0, -1) : v;
    const chomp = v.endsWith('\n') ? '' : '-';
    return [`${head} |${chomp}`, ...body.split('\n').map((line) => (line ? `${' '.repeat(indent + 2)}${line}` : ''))];
  }
  const flat = `${head} ${isScalar(v) ? scalar(v, false) : flowValue(v)}`;
  if (inline(key, v) && (isScalar(v) || key === 'example' || flat.length <= FLOW_WIDTH)) return [flat];
  if (Array.isArray(v)) return [head, ...sequence(v, indent + 2)];
  return [head, ...block(v as JsonMap, indent + 2)];
}

function sequence(items: Json[], indent: number): string[] {
  const pad = ' '.repeat(indent);
  return items.flatMap((item) => {
    if (!isMap(item)) return [`${pad}- ${flowValue(item)}`];
    const [[first, value], ...rest] = Object.entries(item);
    return [...entry(`${pad}- ${scalar(first, false)}:`, first, value, indent + 2), ...block(Object.fromEntries(rest), indent + 2)];
  });
}

/**
 * `map`'s entries as lines of a block mapping at `indent`, each value written as a block under
 * its key; throws if the text would not read back as `map`.
 */
export function yamlEntries(map: JsonMap, indent: number): string {
  const pad = ' '.repeat(indent);
  const text = Object.entries(map)
    .flatMap(([key, v]) => (isMap(v) ? [`${pad}${scalar(key, false)}:`, ...block(v, indent + 2)] : entry(`${pad}${key}:`, key, v, indent)))
    .join('\n');
  assertReadsBack(`${text}\n`, map);
  return `${text}\n`;
}

/** `items` as lines of a block sequence at `indent` (the spec's tags). */
export function yamlItems(items: Json[], indent: number): string {
  const text = `${sequence(items, indent).join('\n')}\n`;
  assertReadsBack(text, items);
  return text;
}

function assertReadsBack(text: string, value: Json): void {
  const back: unknown = parse(text);
  if (JSON.stringify(back) !== JSON.stringify(value)) throw new Error(`the YAML written does not read back as its source:\n${text}`);
}
