import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, START_NODE_OPTIONS } from '../../scripts/lib/service-process';

// The tests and the benchmark run the built service as `npm start` does, Node's options included.
test('the built entry runs what npm start runs', () => {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  expect(scripts.start).toBe(['node', ...START_NODE_OPTIONS, 'dist/main.js'].join(' '));
});
