import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { collections } from '../../../src/collections';
import { startTestApp, type TestApp } from '../../helpers/app';

// Clients that consuming teams generate from the served contract, compiled under `strict` and
// driven through every collection of drivers/drive.ts's scenarios: create, list with search and
// a filter, get, patch with If-Match, a stale If-Match (412), put, a fetched record put back
// whole, a 400, a 409 where a field is unique, delete and a 404, each error read as the generator
// types it. Generated once a run.
const root = join(__dirname, '../../..');
const bin = (name: string) => join(root, 'node_modules/.bin', name);
const dir = mkdtempSync(join(tmpdir(), 'records-sdks-'));
let app: TestApp;
let compiled: { status: number | null; output: string };

function run(command: string, args: string[]): { status: number | null; output: string } {
  const r = spawnSync(command, args, { cwd: dir, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

beforeAll(async () => {
  app = await startTestApp();
  writeFileSync(join(dir, 'openapi.json'), await (await fetch(`${app.url}/openapi.json`)).text());
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  for (const f of readdirSync(join(__dirname, 'drivers'))) copyFileSync(join(__dirname, 'drivers', f), join(dir, f));

  // openapi-typescript: its default options, as its CLI runs them.
  const ot = run(bin('openapi-typescript'), ['openapi.json', '-o', 'openapi-typescript.ts']);
  if (ot.status !== 0) throw new Error(`openapi-typescript failed:\n${ot.output}`);
  // What each driver's types must require to send: the spec's `required` of every write schema.
  const spec = JSON.parse(readFileSync(join(dir, 'openapi.json'), 'utf8')) as {
    components: { schemas: Record<string, { required?: string[] }> };
  };
  const required = collections.map((c) => {
    const fields = spec.components.schemas[`${c.resource}Write`].required ?? [];
    return `  ${c.resource}Write: ${fields.map((f) => JSON.stringify(f)).join(' | ') || 'never'};`;
  });
  writeFileSync(join(dir, 'expected.ts'), `export interface RequiredOf {\n${required.join('\n')}\n}\n`);
  // @hey-api/openapi-ts: its default options.
  const hey = run(bin('openapi-ts'), ['-i', 'openapi.json', '-o', 'hey']);
  if (hey.status !== 0) throw new Error(`openapi-ts failed:\n${hey.output}`);
  // orval: its fetch client with a base URL (drivers/orval.config.mjs).
  const orval = run(bin('orval'), ['--config', 'orval.config.mjs']);
  if (orval.status !== 0) throw new Error(`orval failed:\n${orval.output}`);
  // swagger-typescript-api: its default options.
  const sta = run(bin('swagger-typescript-api'), ['generate', '-p', 'openapi.json', '-o', 'sta']);
  if (sta.status !== 0) throw new Error(`swagger-typescript-api failed:\n${sta.output}`);

  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'ESNext',
        moduleResolution: 'Bundler',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        lib: ['ES2022', 'DOM', 'DOM.Iterable'],
        types: ['node'],
      },
      include: ['*.ts', 'hey/**/*.ts', 'orval/**/*.ts', 'sta/**/*.ts'],
    }),
  );
  compiled = run(bin('tsc'), ['-p', '.']);
}, 120_000);

afterAll(async () => {
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('every generated client and its driver compile under strict', () => {
  expect(compiled.output).toBe('');
  expect(compiled.status).toBe(0);
});

const STEPS = ['create', 'list', 'get', 'patch', '412', 'put', 'put back', '400', 'delete', '404'];
const UNIQUE_STEPS = ['create', 'list', 'get', 'patch', '412', 'put', 'put back', '400', '409', 'delete', '404'];

test.each([
  ['openapi-typescript + openapi-fetch', 'openapi-fetch.ts', 1],
  ['@hey-api/openapi-ts', 'hey-api.ts', 2],
  ['orval (fetch client)', 'orval.ts', 3],
  ['swagger-typescript-api', 'swagger-typescript-api.ts', 4],
])(
  '%s drives every collection against the service',
  async (_name, driver, runId) => {
    // Asynchronously: the service answers from this very process.
    const r = await promisify(execFile)(bin('tsx'), [driver, app.url, String(runId)], {
      cwd: dir,
      timeout: 50_000,
      env: { ...process.env, RECORDS_API_URL: app.url },
    });
    // Every collection, so that one declared later fails here until drive.ts has a scenario for
    // it, which every driver then drives (and compiles only while its generator's types take it).
    expect(JSON.parse(r.stdout)).toEqual(
      Object.fromEntries(collections.map((c) => [c.name, c.uniqueFields.length ? UNIQUE_STEPS : STEPS])),
    );
  },
  60_000,
);
