// The three edits of a new collection, as text inserted into the files a person keeps editing:
// openapi/openapi.yaml (its parts after the last collection's, and the guide's prose that lists
// the collections), src/collections.ts and src/db/migrations.ts. Nothing else in them changes.
import { type Draft, filterParams } from './draft';
import { declaration, listed, type SpecParts } from './spec';
import { yamlEntries, yamlItems } from './yaml';

/** The collections already declared, by path segment and schema name. */
export interface Declared {
  name: string;
  resource: string;
}

const indentOf = (line: string) => line.length - line.trimStart().length;

/** The line after the block that starts at line `i`: the next line indented no deeper, blank lines left out. */
function blockEnd(lines: string[], i: number): number {
  let j = i + 1;
  while (j < lines.length && (lines[j].trim() === '' || indentOf(lines[j]) > indentOf(lines[i]))) j++;
  while (j - 1 > i && lines[j - 1].trim() === '') j--;
  return j;
}

/** The lines of the block under the key matching `key` (searched from `from`): [first, end). */
function section(lines: string[], key: RegExp, from = 0): [number, number] {
  const at = lines.findIndex((l, i) => i >= from && key.test(l));
  if (at < 0) throw new Error(`openapi/openapi.yaml has no ${String(key)}`);
  return [at, blockEnd(lines, at)];
}

/** Inserts `text` after the block of the last line in [from, to) that `pick` accepts, else at `to`. */
function insertAfterLast(lines: string[], [from, to]: [number, number], pick: (line: string) => boolean, text: string): void {
  let last = -1;
  for (let i = from + 1; i < to; i++) if (pick(lines[i])) last = i;
  const at = last < 0 ? to : blockEnd(lines, last);
  lines.splice(at, 0, ...text.replace(/\n$/, '').split('\n'));
}

/** Re-wraps a paragraph of the guide from line `i` on, at 100 columns, its indentation kept. */
function rewrap(lines: string[], i: number): void {
  const indent = ' '.repeat(indentOf(lines[i]));
  let end = i;
  while (end + 1 < lines.length && lines[end + 1].trim() && !/^\s*([|*#]|- |```)/.test(lines[end + 1])) end++;
  const words = lines
    .slice(i, end + 1)
    .join(' ')
    .trim()
    .split(/\s+/);
  const out: string[] = [];
  for (const word of words) {
    const line = out[out.length - 1];
    if (line !== undefined && line.length + 1 + word.length <= 100) out[out.length - 1] = `${line} ${word}`;
    else out.push(`${indent}${word}`);
  }
  lines.splice(i, end - i + 1, ...out);
}

/** Replaces the first match of `pattern` within lines [from, to) and re-wraps its paragraph; false if none matched. */
function editProse(lines: string[], [from, to]: [number, number], pattern: RegExp, replace: (m: RegExpExecArray) => string): boolean {
  const text = lines.slice(from, to).join('\n');
  const m = pattern.exec(text);
  if (!m) return false;
  const edited = text.slice(0, m.index) + replace(m) + text.slice(m.index + m[0].length);
  lines.splice(from, to - from, ...edited.split('\n'));
  const line = from + text.slice(0, m.index).split('\n').length - 1;
  if (!lines[line].trimStart().startsWith('|')) rewrap(lines, line);
  return true;
}

/**
 * openapi/openapi.yaml with the collection's parts after the last declared collection's, and its
 * name in the guide's prose that lists collections; `missed` names the prose it could not find.
 */
export function editSpec(text: string, d: Draft, parts: SpecParts, declared: readonly Declared[]): { text: string; missed: string[] } {
  const lines = text.split('\n');
  const names = declared.map((c) => c.name);
  const resources = declared.map((c) => c.resource);
  const missed: string[] = [];
  const components = section(lines, /^components:$/)[0];

  // From the bottom up, so that each insertion leaves the places above it where they were.
  const schemas = section(lines, /^ {2}schemas:$/, components);
  insertAfterLast(lines, schemas, (l) => resources.some((r) => l === `    ${r}BulkCreated:`), yamlEntries(parts.bulkSchemas, 4));
  insertAfterLast(lines, schemas, (l) => resources.some((r) => l === `    ${r}Page:`), `\n${yamlEntries(parts.schemas, 4)}`);
  const parameters = section(lines, /^ {2}parameters:$/, components);
  insertAfterLast(
    lines,
    parameters,
    (l) => /^ {4}\w+:$/.test(l) && names.some((n) => l.startsWith(`    ${n}_`)),
    yamlEntries(parts.parameters, 4),
  );
  insertAfterLast(lines, section(lines, /^paths:$/), (l) => /^ {2}\/api\/.*:$/.test(l), yamlEntries(parts.paths, 2));
  insertAfterLast(lines, section(lines, /^tags:$/), (l) => names.some((n) => l === `  - name: ${n}`), yamlItems([parts.tag], 2));

  // info.description, found again after each edit: re-wrapping moves its end.
  const guide = () => section(lines, /^ {2}description: \|$/, section(lines, /^info:$/)[0]);
  const prose = (what: string, pattern: RegExp, replace: (m: RegExpExecArray) => string) => {
    if (!editProse(lines, guide(), pattern, replace)) missed.push(what);
  };
  prose('the collections named in its first sentence', /such as (?:`\w+`,\s+)*`\w+`\s+and\s+`\w+`/, (m) => {
    const named = [...m[0].matchAll(/`(\w+)`/g)].map((x) => `\`${x[1]}\``);
    return `such as ${listed([...named, `\`${d.name}\``])}`;
  });
  for (const f of d.fields.filter((x) => x.rank)) {
    const sentence = `A ${d.singularWords}'s \`${f.name}\` sorts by rank, ${f.values!.map((v) => `\`${v}\``).join(' < ')}.`;
    prose(
      `the Ordering section's sentence on ranked ${f.name}`,
      /(sorts by rank, [^.]*\.|\(see each list operation\)\.)(?![\s\S]*sorts by rank, )/,
      (m) => `${m[0]} ${sentence}`,
    );
  }
  const filters = filterParams(d.fields);
  if (filters.length) {
    const lastIn = filters.map((p) => p.op).lastIndexOf('in');
    const said = filters.map((p, i) => `\`${p.param}\`${i === lastIn ? ' (one value or several, comma-separated)' : ''}`).join(', ');
    prose(
      "the Ordering and filters section's list of filters",
      /(`next`\/`previous`: [\s\S]*?)(\.\s+Bounds are inclusive)/,
      (m) => `${m[1]}; ${d.name} ${said}${m[2]}`,
    );
  }
  prose('the search table', /^( *)\| collection \| searched fields \|\n(?: *\|.*\n)*/m, (m) => {
    const searched = d.fields.filter((f) => f.search).map((f) => f.name);
    return `${m[0]}${m[1]}| ${d.name} | ${searched.join(', ')} |\n`;
  });
  const unique = d.fields.filter((f) => f.unique).map((f) => `\`${d.name}.${f.name}\``);
  if (unique.length) prose("the error table's 409 row", /(\| 409 \| a unique field \([^)]*)\)/, (m) => `${m[1]}, ${unique.join(', ')})`);
  return { text: lines.join('\n'), missed };
}

/** src/collections.ts with the declaration at the end of `collections`. */
export function editDeclarations(text: string, d: Draft): string {
  const end = /^\] as const;/m.exec(text);
  if (!end) throw new Error('src/collections.ts has no `] as const;` closing `collections`');
  return text.slice(0, end.index) + declaration(d) + text.slice(end.index);
}

/**
 * src/db/migrations.ts with the collection's migration after the last one: the number after the
 * highest in use (never one reused), and today's date unless a key already sorts after it.
 * `inUse`: every migration's key, search's among them (src/schema.ts); by default, the file's.
 */
export function editMigrations(
  text: string,
  name: string,
  today: string,
  inUse: readonly string[] = [...text.matchAll(/'(\d{8}_\d{3}_\w+)'/g)].map((m) => m[1]),
): { text: string; key: string } {
  const keys = inUse.map((k) => /^(\d{8})_(\d{3})_\w+$/.exec(k)).filter((k): k is RegExpExecArray => k !== null);
  if (!keys.length) throw new Error('src/db/migrations.ts names no migration');
  const number = Math.max(...keys.map((k) => Number(k[2]))) + 1;
  const latest = keys.map((k) => k[1]).sort()[keys.length - 1];
  const key = `${today > latest ? today : latest}_${String(number).padStart(3, '0')}_${name}`;
  const lines = text.split('\n');
  let last = lines.findLastIndex((l) => /^migrations\['\w+'\] = /.test(l));
  if (last < 0) throw new Error('src/db/migrations.ts has no `migrations[...] = ...` to add one after');
  if (!lines[last].endsWith(';')) last = lines.findIndex((l, i) => i > last && l === '};');
  lines.splice(last + 1, 0, '', `migrations['${key}'] = recordTableMigration('${name}');`);
  return { text: lines.join('\n'), key };
}
