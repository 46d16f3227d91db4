import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { requester, startTestApp, type TestApp } from '../../helpers/app';

// The SDK package as a consumer gets it: built by the SDK's build, packed with `npm pack`,
// installed from the tarball into a project of its own, and the README's example compiled there
// under `strict` and run with node against the service. The build runs in a copy of what it
// reads, whose contract has a version of its own: the package must take that one.
const root = join(__dirname, '../../..');
const dir = mkdtempSync(join(tmpdir(), 'records-sdk-package-'));
const project = join(dir, 'project');
const sdk = join(project, 'clients/typescript');
const consumerDir = join(dir, 'consumer');
const TOKEN = 'tok_sdk_package_0123456789abcdef';
const readme = readFileSync(join(root, 'clients/typescript/README.md'), 'utf8');
const [example, problemExample] = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
const README_URL = 'http://127.0.0.1:3000';
const contract = parse(readFileSync(join(root, 'openapi/openapi.yaml'), 'utf8'));
const contractVersion: string = contract.info.version;
const specKinds: string[] = contract.components.schemas.ProblemKind.enum;
const VERSION = `${contractVersion}-packed.1`;

let open: TestApp;
let guarded: TestApp;
const proxies: Proxy[] = [];
let packed: { filename: string; version: string; files: { path: string }[] };
let compiled: { status: number | null; output: string };

function run(command: string, args: string[], cwd = consumerDir): { status: number | null; output: string } {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

function mustRun(command: string, args: string[], cwd = consumerDir): string {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed:\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

interface Proxy {
  url: string;
  /** Every response that broke the contract, as the helpers' check described it. */
  violations: string[];
  server: Server;
}

/** Passes the consumer's requests to `target`, checking every response against the spec. */
async function validatingProxy(target: string): Promise<Proxy> {
  const request = requester(target);
  const violations: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name)) headers[name] = value;
      }
      const raw = chunks.length ? Buffer.concat(chunks) : undefined;
      request(req.method!, req.url!, { raw, headers }).then(
        (answer) => {
          const forwarded: Record<string, string> = {};
          answer.headers.forEach((value, name) => {
            if (!['content-length', 'transfer-encoding', 'connection', 'keep-alive'].includes(name)) forwarded[name] = value;
          });
          res.writeHead(answer.status, forwarded);
          res.end(typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
        },
        (error: Error) => {
          violations.push(error.message);
          res.writeHead(502).end();
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxy = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, violations, server };
  proxies.push(proxy);
  return proxy;
}

/** The SDK's sources and what its build reads, copied into `project`, with the contract at `version`. */
function copyProject(version: string) {
  const listed = mustRun('git', ['ls-files', '-co', '--exclude-standard', 'clients/typescript'], root).split('\n').filter(Boolean);
  for (const file of [...listed, 'scripts/build-sdk.mjs', 'src/generated/openapi.ts', 'openapi/openapi.yaml']) {
    mkdirSync(dirname(join(project, file)), { recursive: true });
    copyFileSync(join(root, file), join(project, file));
  }
  symlinkSync(join(root, 'node_modules'), join(project, 'node_modules'), 'dir');
  const spec = join(project, 'openapi/openapi.yaml');
  writeFileSync(spec, readFileSync(spec, 'utf8').replace(/^(info:\n(?: {2}.*\n)*? {2}version: ).*$/m, `$1${version}`));
  expect(parse(readFileSync(spec, 'utf8')).info.version).toBe(version);
}

/** The packages that the one in `dir` depends on, as this repository installed them, and theirs. */
function dependencyDirs(dir: string, seen = new Set<string>()): string[] {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  for (const name of Object.keys(manifest.dependencies ?? {})) {
    if (seen.has(name)) continue;
    seen.add(name);
    dependencyDirs(join(root, 'node_modules', name), seen);
  }
  return [...seen].map((name) => join(root, 'node_modules', name));
}

beforeAll(async () => {
  copyProject(VERSION);
  // The services start while the SDK builds, in a process of its own.
  const building = promisify(execFile)(process.execPath, ['scripts/build-sdk.mjs'], { cwd: project }).catch(
    (e: { stdout: string; stderr: string }) => {
      throw new Error(`scripts/build-sdk.mjs failed:\n${e.stdout}${e.stderr}`);
    },
  );
  open = await startTestApp();
  guarded = await startTestApp({ apiTokens: [TOKEN] });
  await building;
  mkdirSync(consumerDir);
  [packed] = JSON.parse(mustRun('npm', ['pack', '--json', '--pack-destination', consumerDir], sdk));
  writeFileSync(join(consumerDir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  // Offline: npm's cache may lack the registry's metadata for the package's dependencies (`npm ci`
  // fetches only tarballs), so they are packed from this repository's node_modules and installed
  // first, unsaved. They then satisfy the package's own dependencies; had it not declared one,
  // installing it would prune that one as extraneous.
  const dependencies = (
    JSON.parse(mustRun('npm', ['pack', '--json', '--ignore-scripts', ...dependencyDirs(sdk)])) as { filename: string }[]
  ).map((d) => `./${d.filename}`);
  const install = ['install', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'];
  mustRun('npm', [...install, '--no-save', ...dependencies]);
  mustRun('npm', [...install, `./${packed.filename}`]);

  const [toOpen, toGuarded] = [await validatingProxy(open.url), await validatingProxy(guarded.url)];
  expect(example).toContain(README_URL);
  writeFileSync(join(consumerDir, 'readme.ts'), example.replaceAll(README_URL, toOpen.url));
  expect(problemExample).toContain(README_URL);
  writeFileSync(join(consumerDir, 'problem.ts'), problemExample.replaceAll(README_URL, toOpen.url));
  // Every kind, named by the type, in a switch that must cover them all; and what problemKind reads.
  const cases = specKinds.map((k) => `    case '${k}':\n      return '${k}';`).join('\n');
  writeFileSync(
    join(consumerDir, 'kinds.ts'),
    `import { isProblem, problemKind, problemKinds, type ProblemKind } from '@records-api/client';
const each = (kind: ProblemKind): string => {
  switch (kind) {
${cases}
  }
};
const problem = (type: string) => ({ type, title: 't', status: 400 });
const types = ['/problems/unique', 'http://localhost:3000/problems/stale-etag', 'about:blank', '/problems/no-such-kind', '/problems/unique/'];
console.log(JSON.stringify({
  kinds: problemKinds.map(each),
  read: types.map((type) => problemKind(problem(type)) ?? null),
  notProblems: [undefined, null, 'unique', { type: '/problems/unique' }].map((x) => [isProblem(x), problemKind(x) ?? null]),
}));
`,
  );
  // The token option: sent with every request, and a header given with one request wins.
  writeFileSync(
    join(consumerDir, 'token.ts'),
    `import { createRecordsClient, type components } from '@records-api/client';
const withToken = createRecordsClient({ baseUrl: '${toGuarded.url}', token: '${TOKEN}' });
const without = createRecordsClient({ baseUrl: '${toGuarded.url}' });
const a = await withToken.GET('/api/books/');
const books: components['schemas']['Book'][] | undefined = a.data?.results;
const b = await without.GET('/api/books/');
const c = await withToken.GET('/api/books/', { headers: { Authorization: 'Bearer not-a-token-of-this-service' } });
console.log(JSON.stringify([a.response.status, books?.length, b.response.status, b.error?.status, c.response.status]));
`,
  );
  writeFileSync(
    join(consumerDir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        lib: ['ES2022', 'DOM'],
        types: [],
      },
      include: ['*.ts'],
    }),
  );
  compiled = run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', '.']);
}, 120_000);

afterAll(async () => {
  for (const p of proxies) await new Promise((resolve) => p.server.close(resolve));
  await open?.close();
  await guarded?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs a compiled consumer file with node; asynchronously, as the service answers from this process. */
async function consumer(file: string): Promise<string> {
  const r = await promisify(execFile)(process.execPath, [file], { cwd: consumerDir, timeout: 30_000 });
  return r.stdout;
}

test("the tarball is the built ES module and its types, at the contract's version", () => {
  // Its dependencies were installed as its own, not the consumer's.
  expect(JSON.parse(readFileSync(join(consumerDir, 'package.json'), 'utf8')).dependencies).toEqual({
    '@records-api/client': `file:${packed.filename}`,
  });
  // ...and they are the ones this repository tests with (the package pins openapi-fetch).
  const version = (dir: string) => JSON.parse(readFileSync(join(dir, 'node_modules/openapi-fetch/package.json'), 'utf8')).version;
  expect(version(consumerDir)).toBe(version(root));
  expect(packed.version).toBe(VERSION);
  const installed = readFileSync(join(consumerDir, 'node_modules/@records-api/client/package.json'), 'utf8');
  expect(JSON.parse(installed)).toMatchObject({ version: VERSION, type: 'module' });
  // The build changes the version and nothing else of package.json.
  const committed = readFileSync(join(root, 'clients/typescript/package.json'), 'utf8');
  expect(installed).toBe(committed.replace(`"version": "${contractVersion}"`, `"version": "${VERSION}"`));
  expect(packed.files.map((f) => f.path).sort()).toEqual(
    [
      'README.md',
      'dist/generated/openapi.d.ts',
      'dist/generated/openapi.js',
      'dist/generated/problems.d.ts',
      'dist/generated/problems.js',
      'dist/index.d.ts',
      'dist/index.js',
      'package.json',
    ].sort(),
  );
});

test("the README's examples, a token's use and a switch on every problem kind compile under strict against the installed package", () => {
  expect(compiled.output).toBe('');
  expect(compiled.status).toBe(0);
});

test("the README's example creates a book and finds it with a search, printing what the README says", async () => {
  // docs/clients.md shows the same example.
  expect(readFileSync(join(root, 'docs/clients.md'), 'utf8')).toContain(example);
  const printed = /console\.log\(.*\/\/ (.*)$/m.exec(example)![1];
  expect((await consumer('readme.js')).trim()).toBe(printed);
  const page = await open.request('GET', '/api/books/?search=tolkien');
  expect(page.body.results.map((b: { title: string; isbn: string }) => [b.title, b.isbn])).toEqual([['The Hobbit', '9780547928227']]);
  expect(proxies[0].violations).toEqual([]);
});

test('a token is sent as a bearer token with every request, unless one request gives its own', async () => {
  expect(JSON.parse(await consumer('token.js'))).toEqual([200, 0, 401, 401, 401]);
  expect(proxies[1].violations).toEqual([]);
});

test("the README's problem example switches on the kind: the isbn the first example took", async () => {
  const printed = /console\.log\(.*\/\/ (.*)$/m.exec(problemExample)![1];
  expect((await consumer('problem.js')).trim()).toBe(printed);
  expect(proxies[0].violations).toEqual([]);
});

test("the package's kinds are the contract's, and problemKind reads a type as written or resolved", async () => {
  expect(JSON.parse(await consumer('kinds.js'))).toEqual({
    kinds: specKinds,
    read: ['unique', 'stale-etag', null, null, null],
    notProblems: [
      [false, null],
      [false, null],
      [false, null],
      [false, null],
    ],
  });
});
