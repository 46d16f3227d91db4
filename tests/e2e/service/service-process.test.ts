import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { minimalEnv, ROOT, START_NODE_OPTIONS, spawnService } from '../../../scripts/lib/service-process';

// The tests and the benchmark run the built service as `npm start` does, Node's options included.
test('the built entry runs what npm start runs', () => {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  expect(scripts.start).toBe(['exec', 'node', ...START_NODE_OPTIONS, 'dist/main.js'].join(' '));
});

// A child's 'exit' can come before its last output is read (here, for 1 to 3 of 20 children that
// write 2 MB); tests assert a service's last log line once it has exited, so `exited` waits for
// its pipes too.
test('a child has written all of its output by the time exited resolves', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'service-process-'));
  const child = join(dir, 'child.mjs');
  writeFileSync(child, `process.stdout.write('x'.repeat(2_000_000) + '\\n' + JSON.stringify({ msg: 'last' }) + '\\n');\n`);
  try {
    // Each child's last line as it stood when its `exited` resolved.
    const ends = await Promise.all(
      Array.from({ length: 20 }, () => {
        const run = spawnService({ entry: child, env: minimalEnv() });
        return run.exited.then((exit) => ({ exit, last: run.lines.at(-1) }));
      }),
    );
    for (const end of ends) expect(end).toEqual({ exit: { code: 0, signal: null }, last: { msg: 'last' } });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
