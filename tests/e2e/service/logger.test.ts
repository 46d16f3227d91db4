import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '../../..');

test('flushLogs writes what is buffered after the write under way, so the last line logged is the last out', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(ROOT, 'tests/helpers/logBehindWrite.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, UV_THREADPOOL_SIZE: '1' },
  });
  const messages = stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { msg: string }).msg);
  expect(messages).toEqual(['first', 'last']);
});
