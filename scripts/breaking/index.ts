import { apiCompare } from 'api-smart-diff';

export interface BreakingChange {
  /** Where in the document, as a JSON pointer-like path. */
  where: string;
  description: string;
}

export interface GateResult {
  ok: boolean;
  breaking: BreakingChange[];
  message: string;
}

function major(doc: unknown): number {
  const given = (doc as { info?: { version?: unknown } }).info?.version;
  // YAML reads an unquoted `1.0` as a number; anything but a string or number is no version.
  const version = typeof given === 'string' || typeof given === 'number' ? String(given) : '';
  const m = /^(\d+)\./.exec(version);
  if (!m) throw new Error(`info.version "${version}" is not MAJOR.MINOR.PATCH`);
  return Number(m[1]);
}

/**
 * The changes from `before` to `after` that api-smart-diff classifies as breaking for a client
 * (it resolves $refs and knows request from response: a bound narrowed in a request body, a
 * field or status removed from a response, a required parameter added, ...).
 */
export function breakingChanges(before: unknown, after: unknown): BreakingChange[] {
  const { diffs } = apiCompare(before, after);
  return (
    diffs
      // What a client meets is an operation: api-smart-diff reports each change under every path
      // that uses it (request or response aware there); its verdicts on `components/` alone read
      // every edit as breaking, a reworded description included.
      .filter((d) => d.type === 'breaking' && d.path?.[0] === 'paths')
      // Prose never breaks a client.
      .filter((d) => !['description', 'summary', 'example', 'examples'].includes(String(d.path?.[d.path.length - 1])))
      .map((d) => ({ where: `/${(d.path ?? []).join('/')}`, description: d.description ?? `${d.action} at ${(d.path ?? []).join('/')}` }))
  );
}

/** Breaking changes pass only with a new major version in info.version. */
export function gate(released: unknown, current: unknown): GateResult {
  const breaking = breakingChanges(released, current);
  const from = major(released);
  const to = major(current);
  if (!breaking.length) return { ok: true, breaking, message: 'no breaking change since the released contract' };
  if (to > from)
    return { ok: true, breaking, message: `${breaking.length} breaking change(s), released as a new major version (${from} -> ${to})` };
  return {
    ok: false,
    breaking,
    message: `${breaking.length} breaking change(s) since the released contract (major version ${from}); keep the contract compatible or raise info.version's major number`,
  };
}
