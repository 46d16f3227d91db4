import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * `mkdir -p`. Not mkdirSync's `recursive`: where mkdir fails with ENOENT under a folder that
 * exists (in /proc, say), Node's loop tries again for ever, and the service hung at start.
 */
export function makeFolder(folder: string): void {
  try {
    mkdirSync(folder);
  } catch (err) {
    const { code } = err as NodeJS.ErrnoException;
    if (code === 'EEXIST') return;
    const parent = dirname(folder);
    if (code !== 'ENOENT' || parent === folder) throw err;
    makeFolder(parent);
    // Fails as it is (ENOENT, in /proc) when its parent is there and it still cannot be made.
    mkdirSync(folder);
  }
}
