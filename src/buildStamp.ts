// What dist/ was built from. `npm run build` ends with `node dist/buildStamp.js`, which writes
// dist/built-from.json: hashes of the spec and of src/. `node dist/main.js` compares them with the
// files beside it, so that code older than the spec it serves refuses to start instead of
// answering 500 for an operation it has no handler for.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** The project's root: one level above this file, in src/ (through tsx) and in dist/ alike. */
const ROOT = join(__dirname, '..');
const STAMP = join('dist', 'built-from.json');

/** Built (dist/*.js), not src/*.ts through tsx: only built code can be older than its sources. */
export const runningBuilt = __filename.endsWith('.js');

interface BuildInputs {
  /** sha256 of openapi/openapi.yaml. */
  spec: string;
  /** sha256 of every src/**\/*.ts, with its path; undefined where src/ is not there (a deployment of dist/). */
  sources?: string;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      return entry.isDirectory() ? tsFiles(path) : entry.name.endsWith('.ts') ? [path] : [];
    })
    .sort();
}

/**
 * Hashes, not modification times: a checkout, a copy or a deploy sets new times on unchanged
 * files, and a file can change within the same second as the build.
 */
export function buildInputs(root = ROOT): BuildInputs {
  const spec = createHash('sha256')
    .update(readFileSync(join(root, 'openapi', 'openapi.yaml')))
    .digest('hex');
  if (!existsSync(join(root, 'src'))) return { spec };
  const sources = createHash('sha256');
  for (const file of tsFiles(join(root, 'src'))) {
    const text = readFileSync(file);
    sources.update(`${relative(root, file).split(sep).join('/')}\0${text.length}\0`).update(text);
  }
  return { spec, sources: sources.digest('hex') };
}

export function writeBuildStamp(root = ROOT): void {
  const inputs = buildInputs(root);
  if (!inputs.sources) throw new Error('there is no src/ to say dist/ was built from');
  writeFileSync(join(root, STAMP), `${JSON.stringify(inputs, null, 2)}\n`);
}

/**
 * Why dist/ must not run, or undefined: it is missing, or was built from another spec than the
 * one beside it, or from other sources than src/ holds. Without src/ (a deployment that ships
 * dist/ and the spec) only the spec is compared.
 */
export function staleBuild(root = ROOT): string | undefined {
  const run = 'run npm run build';
  if (!existsSync(join(root, 'dist', 'main.js'))) return `dist/main.js is missing: ${run}`;
  let built: Partial<BuildInputs>;
  try {
    built = JSON.parse(readFileSync(join(root, STAMP), 'utf8')) as Partial<BuildInputs>;
  } catch {
    return `dist/ does not say what it was built from (no dist/built-from.json): ${run}`;
  }
  const now = buildInputs(root);
  if (built.spec !== now.spec) return `dist/ was built from another openapi/openapi.yaml than the one beside it: ${run}`;
  if (now.sources !== undefined && built.sources !== now.sources) return `dist/ was built from other sources than src/ holds: ${run}`;
  return undefined;
}

if (require.main === module) writeBuildStamp();
