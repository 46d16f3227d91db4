import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

// The module boundaries of src/: no import circle (types included), and the search module is
// reached only through its index, so that nothing outside src/search depends on how it works.
// One exception: the SQL functions every SQLite connection registers (sqlFunctions.ts), which the
// connection needs and the index, through the connection, would make a circle.

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
      targets
        .filter((t) => t.startsWith(inside + '/') && ![join(inside, 'index.ts'), join(inside, 'sqlFunctions.ts')].includes(t))
        .map((t) => `${name(file)} -> ${name(t)}`),
    );
  expect(reachingIn).toEqual([]);
});
