// `npm run token -- create --name reporting --scopes '*:read' --file tokens.json`: adds a named
// token with its scopes to the tokens file (TOKENS_FILE), creating it, and prints the token once,
// alone on the last line. The file keeps only a salted hash of it (docs/adr/0012-scoped-tokens.md).
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { newToken, parseTokensFile, TOKEN_NAME, type TokensFile } from '../src/auth/tokensFile';
import { scopeProblem } from '../src/auth/scopes';
import { collections } from '../src/collections';

const USAGE = `usage: npm run -s token -- create --name <name> --scopes '<scope> <scope>...' --file <tokens.json>
       npm run -s token -- list --file <tokens.json>
       npm run -s token -- revoke --name <name> --file <tokens.json>
  Scopes: <collection>:read, <collection>:write, * for every collection or both (posts:read,
  *:read, books:*), separated by spaces or commas. create prints the new token once, alone on its
  last line; the file keeps only its hash. The service reads the file at start (TOKENS_FILE).`;

class UsageError extends Error {}

const names = collections.map((c) => c.name);

function read(path: string): TokensFile {
  if (!existsSync(path)) return { version: 1, tokens: [] };
  try {
    return parseTokensFile(readFileSync(path, 'utf8'), names);
  } catch (err) {
    throw new UsageError(`${path}: ${(err as Error).message}`);
  }
}

/** Written beside, then renamed over the file, so a service starting meanwhile reads a whole file. */
function write(path: string, file: TokensFile): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, path);
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      scopes: { type: 'string' },
      file: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  const command = positionals[0];
  if (values.help || !command) return void console.log(USAGE);
  if (!values.file) throw new UsageError(`--file is required\n${USAGE}`);
  const file = read(values.file);
  if (command === 'list') {
    for (const t of file.tokens) console.log(`${t.name}\t${t.scopes.join(' ')}\tcreated ${t.created_at}`);
    return;
  }
  if (!values.name || !TOKEN_NAME.test(values.name))
    throw new UsageError('--name must be 1-64 letters, digits, ., _ or -, starting with a letter or digit');
  if (command === 'revoke') {
    const left = file.tokens.filter((t) => t.name !== values.name);
    if (left.length === file.tokens.length) throw new UsageError(`no token is named ${values.name}`);
    write(values.file, { ...file, tokens: left });
    console.log(`revoked ${values.name}; restart the service (or its workers) to apply it`);
    return;
  }
  if (command !== 'create') throw new UsageError(`unknown command ${command}\n${USAGE}`);
  const scopes = [...new Set((values.scopes ?? '').split(/[\s,]+/).filter(Boolean))];
  if (!scopes.length) throw new UsageError('--scopes is required, e.g. --scopes "posts:read books:write"');
  for (const s of scopes) {
    const problem = scopeProblem(s, names);
    if (problem) throw new UsageError(problem);
  }
  if (file.tokens.some((t) => t.name === values.name)) throw new UsageError(`a token is already named ${values.name}; revoke it first`);
  const { entry, token } = newToken(values.name, scopes);
  write(values.file, { ...file, tokens: [...file.tokens, entry] });
  console.log(`created ${values.name} with ${scopes.join(' ')} in ${values.file}; it is shown once, below:`);
  console.log(token);
}

try {
  main();
} catch (err) {
  console.error(`token: ${err instanceof UsageError ? err.message : String(err)}`);
  process.exit(1);
}
