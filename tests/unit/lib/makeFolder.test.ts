import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeFolder } from '../../../src/lib/makeFolder';

let dir: string;
beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'records-folder-'))));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('makes the folder and every missing one above it', () => {
  const folder = join(dir, 'a', 'b', 'c');
  makeFolder(folder);
  expect(statSync(folder).isDirectory()).toBe(true);
});

test('a folder that exists is left as it is', () => {
  makeFolder(dir);
  makeFolder(join(dir, 'a'));
  expect(existsSync(join(dir, 'a', 'b', 'c'))).toBe(true);
});

test.each([
  ['the folder', 'file', 'EEXIST'],
  ['one above it', 'file/below', 'ENOTDIR'],
])('a file in the place of %s fails with its error', (_, path, code) => {
  writeFileSync(join(dir, 'file'), '');
  expect(() => makeFolder(join(dir, path))).toThrow(expect.objectContaining({ code }));
});

// mkdirSync's `recursive` loops for ever there (the test would time out).
test('a folder that cannot be made under one that exists (/proc) fails at once', () => {
  expect(() => makeFolder('/proc/records-no-such/below')).toThrow(expect.objectContaining({ code: 'ENOENT' }));
});
