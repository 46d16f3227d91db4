import { mkdirSync, statSync } from 'node:fs';
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
    if (code === 'EEXIST') {
      // A folder already; a file in its place fails with mkdir's own error.
      if (statSync(folder).isDirectory()) return;
      throw err;
    }
    const parent = dirname(folder);
    if (code !== 'ENOENT' || parent === folder) throw err;
    makeFolder(parent);
    // Fails as it is (ENOENT, in /proc) when its parent is there and it still cannot be made.
    mkdirSync(folder);
  }
}
