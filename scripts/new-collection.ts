// `npm run new-collection -- comments --field 'body text required search' ...`: writes a new
// collection's three edits (docs/adding-a-collection.md) once, as a first draft for a person to
// review: its parts of openapi/openapi.yaml, its declaration and its migration; then regenerates
// the types. It refuses a collection that exists, so nothing it wrote is ever rewritten.
import { migrationSource } from '../src/schema';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { format, resolveConfig } from 'prettier';
import { collections } from '../src/collections';
import { loadSpec, readSpecText, SPEC_PATH } from '../src/spec';
import { type Draft, draftOf, DraftError, filterParams, USAGE } from './new-collection/draft';
import { editDeclarations, editMigrations, editSpec } from './new-collection/edits';
import { declaration, type SpecParts, specParts } from './new-collection/spec';
import { yamlEntries, yamlItems } from './new-collection/yaml';

const ROOT = join(__dirname, '..');
const DECLARATIONS = join(ROOT, 'src', 'collections.ts');
const MIGRATIONS = join(ROOT, 'src', 'db', 'migrations.ts');

/** Why the collection cannot be added, if anything it would add exists already. */
function taken(d: Draft, parts: SpecParts, migrations: string): string | undefined {
  const spec = loadSpec();
  const c = collections.find((x) => [x.name, x.resource, x.plural].some((n) => [d.name, d.resource, d.plural].includes(n)));
  if (c) return `${c.name} (${c.resource}, ${c.plural}) is declared in src/collections.ts`;
  const paths = Object.keys(parts.paths).filter((p) => p in spec.paths);
  const schemas = Object.keys({ ...parts.schemas, ...parts.bulkSchemas }).filter((s) => s in (spec.components?.schemas ?? {}));
  const parameters = Object.keys(parts.parameters).filter((p) => p in (spec.components?.parameters ?? {}));
  const inSpec = [...paths, ...schemas, ...parameters, ...(spec.tags ?? []).filter((t) => t.name === d.name).map((t) => `tag ${t.name}`)];
  if (inSpec.length) return `openapi/openapi.yaml has ${inSpec.join(', ')} already`;
  if (new RegExp(`'\\d{8}_\\d{3}_${d.name}'`).test(migrations)) return `src/db/migrations.ts has a migration of ${d.name} already`;
  return undefined;
}

function review(d: Draft, parts: SpecParts, key: string, missed: string[]): string {
  const own = [...Object.keys(parts.schemas), ...Object.keys(parts.bulkSchemas)];
  const patterned = d.fields.filter((f) => f.pattern !== undefined).map((f) => f.name);
  const limits = d.fields
    .filter((f) => f.maxLength !== undefined || f.type === 'integer')
    .map(
      (f) => `${f.name} ${f.type === 'integer' ? `${f.minimum}..${f.maximum}` : `${f.minLength ?? (f.required ? 1 : 0)}..${f.maxLength}`}`,
    );
  return [
    `Added ${d.name}: its parts of openapi/openapi.yaml, its declaration in src/collections.ts and the`,
    `migration ${key} in src/db/migrations.ts; src/generated/ is regenerated.`,
    '',
    'Review openapi/openapi.yaml before committing (git diff shows every line written):',
    `  - descriptions, drafted from the field names: the tag ${d.name}, the schemas ${own.join(', ')},`,
    `    the parameters ${Object.keys(parts.parameters).join(', ')}, and the list operation's sentence`,
    '  - examples: placeholders such as "Example title"; give each a value a reader recognises',
    `  - limits (${limits.join(', ') || 'none'}; ${d.maxPageSize} a page): the migration makes the table's columns`,
    '    from them when it first runs, and a change after it has shipped needs a migration of its own',
    `  - info.description: ${d.name} is now in its first sentence, the search table${d.fields.some((f) => f.unique) ? ', the 409 row' : ''}${filterParams(d.fields).length ? ', the list of filters' : ''}${d.fields.some((f) => f.rank) ? ', the ranked fields' : ''}`,
    ...missed.map((m) => `  - NOT FOUND, add ${d.name} by hand: ${m}`),
    ...(patterned.length
      ? [
          `  - scripts/seed/data.ts: add a generator by name for ${patterned.join(', ')}: the seed cannot invent values that match a pattern`,
        ]
      : []),
    '',
    'Then: npm run typecheck && npx jest tests/unit/spec.rules.test.ts tests/unit/spec.test.ts --selectProjects=unit',
  ].join('\n');
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      field: { type: 'string', multiple: true, default: [] },
      resource: { type: 'string' },
      plural: { type: 'string' },
      'dry-run': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help || !positionals.length) return void console.log(USAGE);
  if (positionals.length > 1) throw new DraftError(`one collection at a time, not ${positionals.join(' ')}\n${USAGE}`);
  const d = draftOf(positionals[0], values.field, { resource: values.resource, plural: values.plural });
  const parts = specParts(d);
  const migrations = readFileSync(MIGRATIONS, 'utf8');
  const problem = taken(d, parts, migrations);
  if (problem) throw new DraftError(`${problem}; nothing was written`);

  const spec = editSpec(readSpecText(), d, parts, collections);
  const today = new Date().toISOString().slice(0, 10).replace(/-/g, '');
  // Every key in use, search's migrations (src/search/schema.ts) among them, for the next number.
  const migration = editMigrations(migrations, d.name, today, await migrationSource.getMigrations([]));
  const declarations = await format(editDeclarations(readFileSync(DECLARATIONS, 'utf8'), d), {
    ...(await resolveConfig(DECLARATIONS)),
    filepath: DECLARATIONS,
  });
  if (values['dry-run']) {
    const yaml = [yamlItems([parts.tag], 2), yamlEntries(parts.paths, 2), yamlEntries(parts.parameters, 4), yamlEntries(parts.schemas, 4)];
    console.log(
      [
        ...yaml,
        yamlEntries(parts.bulkSchemas, 4),
        declaration(d),
        `migrations['${migration.key}'] = recordTableMigration('${d.name}');`,
      ].join('\n'),
    );
    return;
  }
  writeFileSync(SPEC_PATH, spec.text);
  writeFileSync(DECLARATIONS, declarations);
  writeFileSync(MIGRATIONS, migration.text);
  const generated = spawnSync(process.execPath, [join(ROOT, 'scripts', 'generate-types.mjs')], { cwd: ROOT, stdio: 'inherit' });
  if (generated.status !== 0) throw new Error('npm run generate failed on the spec as written; fix openapi/openapi.yaml and run it again');
  console.log(review(d, parts, migration.key, spec.missed));
}

main().catch((err: unknown) => {
  console.error(
    `new-collection: ${err instanceof DraftError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
  );
  process.exit(1);
});
