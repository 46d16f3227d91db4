import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { scopeProblem } from './scopes';

/**
 * TOKENS_FILE: named tokens with their scopes, kept as hashes only (docs/adr/0012-scoped-tokens.md).
 * A token is `rt_<id>_<secret>`: the id finds its entry, the secret (256 random bits) is checked
 * against SHA-256(salt || secret). A slow hash (scrypt) guards guessable passwords; a 256-bit
 * random secret cannot be guessed, and a slow hash would cost every request milliseconds of CPU.
 */
export interface TokensFile {
  version: 1;
  tokens: StoredToken[];
}

export interface StoredToken {
  /** 12 hex digits, the public part of the token that finds its entry. */
  id: string;
  /** Shown in the access log; unique in the file. */
  name: string;
  scopes: string[];
  /** 16 random bytes, hex. */
  salt: string;
  /** `sha256:<hex>` of salt and secret. */
  hash: string;
  created_at: string;
}

export const TOKEN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const TOKEN_FORMAT = /^rt_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

function hashOf(salt: string, secret: string): string {
  return `sha256:${createHash('sha256').update(Buffer.from(salt, 'hex')).update(secret).digest('hex')}`;
}

/** A new token for `name`: the entry to store, and the token, which is never stored. */
export function newToken(name: string, scopes: string[], now = new Date()): { entry: StoredToken; token: string } {
  const id = randomBytes(6).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  const salt = randomBytes(16).toString('hex');
  return { entry: { id, name, scopes, salt, hash: hashOf(salt, secret), created_at: now.toISOString() }, token: `rt_${id}_${secret}` };
}

/** The file's text, checked; `problem` says what is wrong in a sentence that never quotes a hash. */
export function parseTokensFile(text: string, collectionNames: readonly string[]): TokensFile {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new Error('is not JSON');
  }
  const file = data as Partial<TokensFile>;
  if (!file || typeof file !== 'object' || file.version !== 1 || !Array.isArray(file.tokens)) {
    throw new Error('must be {"version": 1, "tokens": [...]}, as `npm run token -- create` writes it');
  }
  const ids = new Set<string>();
  const names = new Set<string>();
  file.tokens.forEach((t, i) => {
    const where = `token ${i + 1}`;
    if (!t || typeof t !== 'object') throw new Error(`${where} is not an object`);
    if (typeof t.id !== 'string' || !/^[0-9a-f]{12}$/.test(t.id)) throw new Error(`${where}: id must be 12 hex digits`);
    if (typeof t.name !== 'string' || !TOKEN_NAME.test(t.name)) throw new Error(`${where}: name must be 1-64 letters, digits, ., _ or -`);
    if (ids.has(t.id)) throw new Error(`${where}: the id ${t.id} is used twice`);
    if (names.has(t.name)) throw new Error(`${where}: the name ${t.name} is used twice`);
    ids.add(t.id);
    names.add(t.name);
    if (typeof t.salt !== 'string' || !/^[0-9a-f]{32}$/.test(t.salt)) throw new Error(`${where} (${t.name}): salt must be 32 hex digits`);
    if (typeof t.hash !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(t.hash))
      throw new Error(`${where} (${t.name}): hash must be sha256:<64 hex digits>`);
    if (!Array.isArray(t.scopes) || !t.scopes.length) throw new Error(`${where} (${t.name}): scopes must be a non-empty list`);
    for (const s of t.scopes) {
      const problem = typeof s === 'string' ? scopeProblem(s, collectionNames) : 'a scope must be a string';
      if (problem) throw new Error(`${where} (${t.name}): ${problem}`);
    }
  });
  return file as TokensFile;
}

export interface StoredTokenMatch {
  name: string;
  scopes: readonly string[];
}

/** Finds the entry a presented token belongs to, comparing hashes in constant time. */
export function tokenMatcher(file: TokensFile): (token: string) => StoredTokenMatch | undefined {
  const byId = new Map(file.tokens.map((t) => [t.id, t]));
  // An unknown id is hashed too, so that its answer takes as long as a wrong secret's.
  const decoy = { salt: '0'.repeat(32), hash: `sha256:${'0'.repeat(64)}` };
  return (token) => {
    const m = TOKEN_FORMAT.exec(token);
    if (!m) return undefined;
    const entry = byId.get(m[1]);
    const { salt, hash } = entry ?? decoy;
    const given = Buffer.from(hashOf(salt, m[2]));
    const ok = timingSafeEqual(given, Buffer.from(hash)) && entry !== undefined;
    return ok ? { name: entry.name, scopes: entry.scopes } : undefined;
  };
}

/** Whether `token` has the shape of a tokens-file token (so other checks need not try it). */
export const isFileToken = (token: string) => TOKEN_FORMAT.test(token);
