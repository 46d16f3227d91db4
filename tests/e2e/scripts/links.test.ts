// The link check that `npm run lint` runs over the documentation (scripts/check-links.mjs): it
// must fail on a broken relative link or anchor, and pass on good ones, offline.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const checker = resolve(__dirname, '../../../scripts/check-links.mjs');

function check(dir: string) {
  const run = spawnSync(process.execPath, [checker, dir], { cwd: dir, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('scripts/check-links.mjs', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'links-'));
    mkdirSync(join(dir, 'docs'));
    writeFileSync(join(dir, 'docs', 'guide.md'), '# Guide\n\n## Running it in production\n\nText.\n');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('passes when every relative link and anchor resolves, and never fetches a URL', () => {
    writeFileSync(
      join(dir, 'README.md'),
      [
        '# Scratch',
        '',
        'See [the guide](docs/guide.md), [production](docs/guide.md#running-it-in-production),',
        '[below](#scratch) and [a site](https://unreachable.invalid/page.md#nowhere).',
        '',
        '```sh',
        'echo "[not a link](missing.md)"',
        '```',
        '',
      ].join('\n'),
    );
    const { status, output } = check(dir);
    expect(output).toContain('every relative link and anchor resolves');
    expect(status).toBe(0);
  });

  it('fails on a link to a missing file, naming the file and line', () => {
    writeFileSync(join(dir, 'README.md'), '# Scratch\n\nSee [the guide](docs/missing.md).\n');
    const { status, output } = check(dir);
    expect(status).toBe(1);
    expect(output).toMatch(/README\.md:3: docs\/missing\.md: no such file/);
  });

  it('fails on an anchor that no heading makes', () => {
    writeFileSync(join(dir, 'README.md'), '# Scratch\n\nSee [shutdown](docs/guide.md#shutdown).\n');
    const { status, output } = check(dir);
    expect(status).toBe(1);
    expect(output).toMatch(/README\.md:3: docs\/guide\.md#shutdown: no heading with anchor #shutdown/);
  });
});
