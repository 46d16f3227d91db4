import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertBuilt, minimalEnv, ROOT } from '../../../scripts/lib/service-process';

// `node dist/main.js` refuses a dist/ built from another spec or other sources than those beside
// it (src/buildStamp.ts): such code answered 500 for operations it had no handler for. Each test
// runs a copy of the built project (`npm run build` first), changed as the test says.
let dir: string;
beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'stale-build-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let copies = 0;
/** A copy of dist/ and the spec, and of src/ if asked; fresh files, so every time is new. */
function copy(withSources: boolean): string {
  const root = join(dir, String(++copies));
  for (const part of ['dist', 'openapi', ...(withSources ? ['src'] : [])]) cpSync(join(ROOT, part), join(root, part), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  return root;
}

const env = (root: string) => ({
  ...minimalEnv(),
  PORT: '0',
  WEB_CONCURRENCY: '1',
  DATABASE_URL: `sqlite:${join(root, 'records.sqlite3')}`,
});

function refused(root: string) {
  const run = spawnSync(process.execPath, [join(root, 'dist', 'main.js')], { env: env(root), encoding: 'utf8', timeout: 60_000 });
  return { code: run.status, stderr: run.stderr, stdout: run.stdout };
}

test.each<[string, (root: string) => void, boolean, string]>([
  [
    'a spec changed since the build, in a deployment without src/',
    (root) => appendFileSync(join(root, 'openapi', 'openapi.yaml'), '# changed\n'),
    false,
    'dist/ was built from another openapi/openapi.yaml than the one beside it: run npm run build',
  ],
  [
    'a source changed since the build',
    (root) => appendFileSync(join(root, 'src', 'main.ts'), '// changed\n'),
    true,
    'dist/ was built from other sources than src/ holds: run npm run build',
  ],
  [
    'a source added since the build',
    (root) => appendFileSync(join(root, 'src', 'new.ts'), 'export {};\n'),
    true,
    'dist/ was built from other sources than src/ holds: run npm run build',
  ],
  [
    'a dist/ that does not say what it was built from',
    (root) => rmSync(join(root, 'dist', 'built-from.json')),
    true,
    'dist/ does not say what it was built from (no dist/built-from.json): run npm run build',
  ],
])('%s: one line saying what to run, exit code 1', (_name, change, withSources, want) => {
  const root = copy(withSources);
  change(root);
  expect(refused(root)).toEqual({ code: 1, stderr: `records API failed to start: ${want}\n`, stdout: '' });
});

// A deployment ships dist/ and the spec without src/; a copy gives every file a new time, so a
// comparison of times would refuse it.
test.each([
  ['a deployment of dist/ and the spec, without src/', false],
  ['a copy with src/', true],
])(
  '%s, as built: starts',
  async (_name, withSources) => {
    const root = copy(withSources);
    const child = spawn(process.execPath, [join(root, 'dist', 'main.js')], { env: env(root), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          out += chunk;
          if (/"msg":"listening"/.test(out)) resolve();
        });
        void exited.then((code) => reject(new Error(`exited ${String(code)} before listening: ${err}`)));
      });
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    expect(err).toBe('');
  },
  60_000,
);
