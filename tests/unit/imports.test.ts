import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

// The module boundaries of src/: no import circle (types included), the search module reached only
// through its index, so that nothing outside src/search depends on how it works, and its folders
// layered one way (below).

const SRC = resolve(__dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? (e.name === 'generated' ? [] : sourceFiles(join(dir, e.name))) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Each file's relative imports, as files of src/ (a folder's import is its index.ts). */
function importGraph(): Map<string, string[]> {
  const files = new Set(sourceFiles(SRC));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map(([, spec]) => {
      const base = resolve(dirname(file), spec);
      return [`${base}.ts`, join(base, 'index.ts')].find((f) => files.has(f)) ?? base;
    });
    graph.set(
      file,
      targets.filter((t) => files.has(t)),
    );
  }
  return graph;
}

const name = (file: string) => relative(SRC, file);

test('no import circle in src/', () => {
  const graph = importGraph();
  const circles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (file: string, path: string[]) => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      circles.push([...path.slice(path.indexOf(file)), file].map(name).join(' -> '));
      return;
    }
    state.set(file, 'open');
    for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
    state.set(file, 'done');
  };
  for (const file of graph.keys()) visit(file, []);
  expect(circles).toEqual([]);
});

test('outside src/search, search is imported through its index only', () => {
  const inside = join(SRC, 'search');
  const reachingIn = [...importGraph()]
    .filter(([file]) => !file.startsWith(inside + '/'))
    .flatMap(([file, targets]) =>
      targets.filter((t) => t.startsWith(inside + '/') && t !== join(inside, 'index.ts')).map((t) => `${name(file)} -> ${name(t)}`),
    );
  expect(reachingIn).toEqual([]);
});

// One direction of dependency (docs/README.md): search sits on db, never the reverse (the schema's
// parts and the SQLite functions reach db through src/schema.ts and registries); auth answers
// through src/problems, not express's plumbing; handlers and the layers under them take nothing
// from src/http; problems and lib stand on nothing of the service's.
const FORBIDDEN: [from: string, to: string[]][] = [
  ['db', ['search', 'handlers', 'http', 'auth']],
  ['search', ['handlers', 'http', 'auth']],
  ['auth', ['http', 'handlers', 'db', 'search']],
  ['handlers', ['http']],
  ['problems', ['db', 'search', 'auth', 'handlers', 'http']],
  ['lib', ['db', 'search', 'auth', 'handlers', 'http', 'problems']],
];

test.each(FORBIDDEN)('src/%s imports nothing from src/%p', (from, to) => {
  const folder = (file: string) => name(file).split('/')[0];
  const crossing = [...importGraph()]
    .filter(([file]) => folder(file) === from)
    .flatMap(([file, targets]) => targets.filter((t) => to.includes(folder(t))).map((t) => `${name(file)} -> ${name(t)}`));
  expect(crossing).toEqual([]);
});

test("docs/README.md's map names every folder of src/, and no other", () => {
  const map = /## Where things are\n\n```text\n([\s\S]*?)```/.exec(readFileSync(resolve(SRC, '../docs/README.md'), 'utf8'))![1];
  const named = [...map.matchAll(/^src\/([\w-]+)\//gm)].map((m) => m[1]).sort();
  const folders = readdirSync(SRC, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  expect(named).toEqual(folders);
});
