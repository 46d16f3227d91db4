// Builds the TypeScript SDK in clients/typescript/ (called by `npm run build`): its version is the
// contract's info.version, written into its package.json here; its types are src/generated/openapi.ts
// (which `npm run generate` makes and the test command keeps current), compiled to dist/.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const path = (p) => fileURLToPath(new URL(`../${p}`, import.meta.url));
const sdk = (p) => path(`clients/typescript/${p}`);

/** `text` (a package.json) with its "version" replaced, keeping the rest byte for byte. */
export function withVersion(text, version) {
  const pattern = /^(\s*"version":\s*)"[^"]*"/m;
  if (!pattern.test(text)) throw new Error('package.json has no "version" to write');
  return text.replace(pattern, `$1${JSON.stringify(version)}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { version } = parse(readFileSync(path('openapi/openapi.yaml'), 'utf8')).info;
  const manifest = readFileSync(sdk('package.json'), 'utf8');
  // Written only when it differs, so that a build leaves a current checkout unchanged.
  if (withVersion(manifest, version) !== manifest) writeFileSync(sdk('package.json'), withVersion(manifest, version));

  rmSync(sdk('dist'), { recursive: true, force: true });
  mkdirSync(sdk('src/generated'), { recursive: true });
  copyFileSync(path('src/generated/openapi.ts'), sdk('src/generated/openapi.ts'));
  execFileSync(process.execPath, [path('node_modules/typescript/bin/tsc'), '-p', sdk('tsconfig.json')], { stdio: 'inherit' });
  console.log(`built clients/typescript/dist (@records-api/client ${version})`);
}
