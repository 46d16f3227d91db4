import { parseSearch } from '../../../src/search/predicate';
import { assertMatchesContract } from '../contract';
import { canonical } from '../../../src/handlers/idempotency';
import { type FieldValue, type IssuedCursor, type ListQuery, type Model, type Prediction, type Rec, sameValue } from './model';
import { type Conditional, encodeLoose, type Plan, queryParams, type TagChoice } from './plans';
import type { Operation } from './spec';

export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

export interface Sent {
  method: string;
  path: string;
  query: string[];
  body?: { json?: unknown; raw?: string };
  headers?: Record<string, string>;
}

/** Sends requests to the app under test; every answer is checked against the spec first. */
export class Sender {
  count = 0;
  /** How many answers of each kind (`valid create 201`), for the closing line. */
  readonly tallies = new Map<string, number>();
  constructor(readonly baseUrl: string) {}

  tally(kind: string): void {
    this.tallies.set(kind, (this.tallies.get(kind) ?? 0) + 1);
  }

  async send({ method, path, query, body, headers: extra = {} }: Sent): Promise<Answer> {
    this.count++;
    const payload = body?.raw ?? (body && body.json !== undefined ? JSON.stringify(body.json) : undefined);
    const headers: Record<string, string> = { ...extra, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) };
    const res = await fetch(`${this.baseUrl}${path}${query.length ? `?${query.join('&')}` : ''}`, {
      method,
      headers,
      body: payload,
      redirect: 'manual',
    });
    const text = await res.text();
    const parsed = /^application\/(problem\+)?json/.test(res.headers.get('content-type') ?? '') && text ? JSON.parse(text) : text;
    await assertMatchesContract({ method, path, status: res.status, headers: res.headers, body: parsed });
    return { status: res.status, body: parsed, headers: res.headers };
  }
}

export class Mismatch extends Error {}

function describe(s: Sent): string {
  const body =
    s.body?.raw !== undefined ? `raw ${JSON.stringify(s.body.raw).slice(0, 300)}` : (JSON.stringify(s.body?.json)?.slice(0, 300) ?? '');
  const headers = Object.entries(s.headers ?? {}).map(
    ([k, v]) => `${k}: ${JSON.stringify(v.length > 80 ? `${v.slice(0, 80)}...(${v.length})` : v)}`,
  );
  const q = s.query.join('&');
  return `${s.method} ${s.path}${q ? `?${q.length > 600 ? `${q.slice(0, 600)}...` : q}` : ''}${headers.length ? ` [${headers.join('; ')}]` : ''} ${body}`;
}

/** A check of one answer: throws a Mismatch that shows the request and the answer. */
type Must = (ok: boolean, why: string) => void;

function checker(plan: Plan, sent: Sent, answer: Answer): Must {
  return (ok, why) => {
    if (ok) return;
    const body = JSON.stringify(answer.body);
    const etag = answer.headers.get('etag');
    throw new Mismatch(
      `${plan.op.id} ${describe(sent)}\n${why}\nanswer: ${answer.status}${etag ? ` ETag ${etag}` : ''} ${body.length > 2000 ? `${body.slice(0, 2000)}...` : body}`,
    );
  };
}

const named = (answer: Answer): string[] => (answer.body?.errors ?? []).map((e: { field: string }) => e.field);

type Verb = 'list' | 'export' | 'create' | 'get' | 'replace' | 'update' | 'delete' | 'service';

function verbOf(op: Operation): Verb {
  if (!op.collection) return 'service';
  if (op.path.endsWith('/export/')) return 'export';
  const item = op.path.includes('{');
  return (
    ({ GET: item ? 'get' : 'list', POST: 'create', PUT: 'replace', PATCH: 'update', DELETE: 'delete' } as const)[op.method as 'GET'] ??
    'service'
  );
}

const versionOf = (answer: Answer): number | undefined => {
  const m = /^"([0-9]+)"$/.exec(answer.headers.get('etag') ?? '');
  return m ? Number(m[1]) : undefined;
};

/** The entity tags of a conditional header, written against the record's version `v`. */
function conditionalHeader(cond: Conditional, v: number): string {
  const spoiled = (header: string) => (cond.malformed ? `${header}${cond.separator}w/"${v}"` : header);
  if (cond.star) return spoiled('*');
  const tag = (t: TagChoice) => {
    const value =
      t.kind === 'current'
        ? String(v)
        : t.kind === 'other'
          ? String(t.delta % 2 && v - t.delta >= 0 ? v - t.delta : v + t.delta)
          : t.kind === 'zeros'
            ? `${'0'.repeat(t.zeros)}${v}`
            : t.value;
    return `${t.weak ? 'W/' : ''}"${value}"`;
  };
  return spoiled(cond.tags.map(tag).join(cond.separator));
}

/**
 * Whether a conditional header names the record (RFC 9110): `*` names any existing record;
 * If-Match compares strongly (a weak tag never matches), If-None-Match weakly. Tags compare
 * character by character, so `"01"` is not `"1"`.
 */
function condHolds(cond: Conditional, exists: boolean): boolean {
  if (!exists || cond.malformed) return false;
  if (cond.star) return true;
  return cond.tags.some((t) => t.kind === 'current' && (cond.header === 'If-None-Match' || !t.weak));
}

/** Sends one plan and checks the answers against what the contract and the model say they must be. */
export async function runPlan(plan: Plan, model: Model, sender: Sender): Promise<void> {
  const { op } = plan;
  const c = op.collection!;
  const verb = verbOf(op);
  if (plan.race) return plan.race.kind === 'creates' ? raceCreates(plan, model, sender) : raceWrites(plan, model, sender);
  let target: Rec | undefined;
  let idText = '';
  // A broken plan's defaults name a record for any operation; the service's own hold none.
  const id = op.collection ? plan.id : undefined;
  if (id?.kind === 'known') {
    target = model.pick(c, id.n);
    idText = String(target?.id ?? 1e15 + id.n);
    target ??= model.get(c, Number(idText));
  } else if (id?.kind === 'any') {
    target = model.get(c, id.id);
    idText = String(id.id);
  } else if (id?.kind === 'odd') idText = id.raw;

  let body = plan.body;
  if (plan.collide && body && typeof body === 'object') {
    const other = model.pick(c, plan.collide.n);
    const value = other?.[plan.collide.field];
    const folds = model.rules[c].fields[plan.collide.field].format === 'email';
    if (typeof value === 'string') body = { ...body, [plan.collide.field]: plan.collide.upper && folds ? value.toUpperCase() : value };
  }
  const headers: Record<string, string> = {};
  const version = target ? model.version(c, target.id) : undefined;
  if (plan.cond && (version !== undefined || !target)) headers[plan.cond.header] = conditionalHeader(plan.cond, version ?? 1);
  let idem: { key: string; stored: ReturnType<Model['remembered']> } | undefined;
  let raw = plan.raw;
  if (plan.idem) {
    let key = plan.idem.kind === 'new' ? plan.idem.key : `reuse-${plan.idem.n}`;
    if (plan.idem.kind === 'reuse') {
      const old = model.pickKey(plan.idem.n, plan.idem.own ? c : undefined);
      if (old) {
        key = old.key;
        // The first body again: the same JSON document, whatever the order of its keys or its spacing.
        if (plan.idem.sameBody && old.collection === c && old.entry) {
          const first = old.entry.body as Record<string, unknown>;
          body = plan.idem.shape === 1 ? Object.fromEntries(Object.entries(first).reverse()) : first;
          if (plan.idem.shape === 2) raw = JSON.stringify(first, null, 2);
        }
      }
    }
    headers['Idempotency-Key'] = key;
    idem = { key, stored: model.remembered(c, key) };
  }
  // Headers broken on purpose go as they are.
  Object.assign(headers, plan.headers);
  // (A record whose version the model does not know gets no conditional header.)
  const cond = plan.cond && headers[plan.cond.header] !== undefined ? plan.cond : undefined;

  if (verb === 'list' && !plan.broken) return runList(plan, model, sender);
  let query = [...plan.query];
  if (plan.badCursor) query = badCursorQuery(plan, model, query);
  const sent: Sent = {
    method: op.method,
    path: op.path.replace('{id}', idText).replace(/\{(\w+)\}/g, (_m, name: string) => plan.pathParams?.[name] ?? ''),
    query,
    body: op.body ? { json: body, raw } : undefined,
    headers,
  };
  const answer = await sender.send(sent);
  const must = checker(plan, sent, answer);
  const replay = answer.headers.get('idempotent-replayed') ? ' replayed' : '';
  sender.tally(
    `${plan.broken ? 'broken' : 'valid'} ${verb}${cond ? ` ${cond.header}` : ''}${idem ? ' Idempotency-Key' : ''} ${answer.status}${replay}`,
  );

  if (idem && answer.status !== 201) model.failed(c, idem.key);
  if (plan.broken) {
    const { status, field, why } = plan.broken;
    must(answer.status === status, `broken (${why}): want ${status}`);
    if (field !== undefined)
      must(
        named(answer).includes(field),
        `broken (${why}): the problem must name ${JSON.stringify(field)}, names ${JSON.stringify(named(answer))}`,
      );
    return;
  }
  if (verb === 'service') return void must(answer.status === 200, 'want 200');
  // An export's records are checked against the pages in tests/integration/exports/; a valid plan
  // may still put a range upside down, a 400 naming its lower bound as on a list.
  if (verb === 'export') {
    const lower = new Set(model.rules[c].ranges.map(([from]) => from));
    const upsideDown = answer.status === 400 && named(answer).length > 0 && named(answer).every((f) => lower.has(f));
    return void must(answer.status === 200 || upsideDown, 'want 200, or a 400 naming an upside-down range');
  }

  const etagIs = (v: number | undefined, why: string) =>
    must(v !== undefined && answer.headers.get('etag') === `"${v}"`, `${why}: want ETag "${v}"`);
  if (verb === 'get') {
    if (!target) return void must(answer.status === 404, `no record ${idText}: want 404`);
    if (cond && condHolds(cond, true)) {
      must(
        answer.status === 304 && answer.body === '',
        `${cond.header}: ${headers[cond.header]} names the current ETag "${version}": want 304 and no body`,
      );
      return etagIs(version, '304');
    }
    must(answer.status === 200 && JSON.stringify(answer.body) === JSON.stringify(target), `want 200 and ${JSON.stringify(target)}`);
    return etagIs(version, 'the current version');
  }

  // Writes. A precondition is checked before anything else that the write would do. If-Match
  // fails for a missing record (412); If-None-Match holds for it, and the write finds none (404).
  // A conditional header that is no list of entity tags is refused, whichever it is.
  if (verb !== 'create' && cond?.malformed) {
    must(answer.status === 400, `${cond.header}: ${headers[cond.header]} is no list of entity tags: want 400`);
    return void must(named(answer).includes(cond.header), `the 400 must name ${cond.header}`);
  }
  if (verb !== 'create' && cond?.header === 'If-Match') {
    if (!condHolds(cond, Boolean(target))) {
      return void must(
        answer.status === 412,
        `If-Match: ${headers['If-Match']} names none of the current tags (${target ? `"${version}"` : 'no record'}): want 412`,
      );
    }
  } else if (verb !== 'create' && !target) {
    return void must(answer.status === 404, `no record ${idText}: want 404`);
  } else if (verb !== 'create' && cond && condHolds(cond, true)) {
    return void must(answer.status === 412, `If-None-Match: ${headers['If-None-Match']} names the current ETag "${version}": want 412`);
  }
  if (verb === 'delete') {
    must(answer.status === 204, 'want 204');
    return model.remove(c, target!.id);
  }

  if (idem?.stored) {
    const again = idem.stored.canon === canonical(JSON.parse(JSON.stringify(body)));
    if (!again) {
      must(answer.status === 422, `Idempotency-Key ${JSON.stringify(idem.key)} was used with another body: want 422`);
      return void must(named(answer).includes('Idempotency-Key'), 'the 422 must name Idempotency-Key');
    }
    const first = idem.stored.answer;
    must(
      answer.status === 201 && answer.headers.get('idempotent-replayed') === 'true',
      `Idempotency-Key ${JSON.stringify(idem.key)} with the same body: want the first answer again, with Idempotent-Replayed: true`,
    );
    must(JSON.stringify(answer.body) === JSON.stringify(first.body), `replay: want the first body ${JSON.stringify(first.body)}`);
    return void must(
      answer.headers.get('location') === first.location && answer.headers.get('etag') === first.etag,
      `replay: want Location ${first.location} and ETag ${first.etag}`,
    );
  }

  const fields = model.written(c, body as Record<string, unknown>, verb !== 'update');
  const conflicts = model.conflicts(c, fields, target?.id);
  if (conflicts.length) {
    must(answer.status === 409, `${conflicts.join(', ')} taken: want 409`);
    return void must(conflicts.includes(answer.body.errors?.[0]?.field), `the 409 must name one of ${conflicts.join(',')}`);
  }
  must(answer.status === (verb === 'create' ? 201 : 200), `want ${verb === 'create' ? 201 : 200}`);
  const want = { ...(verb === 'update' ? target : {}), ...fields };
  for (const [k, v] of Object.entries(want)) {
    if (k !== 'updated_at')
      must(sameValue(v, answer.body[k]), `${k}: sent ${JSON.stringify(v)}, answered ${JSON.stringify(answer.body[k])}`);
  }
  if (verb === 'create') {
    must(answer.headers.get('location') === `/api/${c}/${answer.body.id}/`, `Location must be /api/${c}/${answer.body.id}/`);
    must(answer.headers.get('idempotent-replayed') === null, 'a first create is no replay: no Idempotent-Replayed');
    must(model.get(c, answer.body.id) === undefined, `id ${answer.body.id} is taken`);
    const v = versionOf(answer);
    must(v !== undefined, 'a created record has an ETag');
    if (idem) {
      const json = JSON.parse(JSON.stringify(body));
      model.remember(c, idem.key, {
        canon: canonical(json),
        body: json,
        answer: { body: answer.body, location: answer.headers.get('location'), etag: answer.headers.get('etag') },
      });
    }
    return model.set(c, answer.body, v!);
  }
  must(
    answer.body.id === target!.id && answer.body.created_at === target!.created_at && answer.body.updated_at >= target!.updated_at,
    'id and timestamps',
  );
  // A PATCH with no field in it writes nothing: the version stays.
  const step = verb === 'update' && !Object.keys(fields).length ? 0 : 1;
  if (version !== undefined) etagIs(version + step, step ? 'a write adds one to the version' : 'an empty PATCH keeps the version');
  model.set(c, answer.body, version !== undefined ? version + step : versionOf(answer)!);
}

/** The query of a plan whose cursor must be refused, made from a cursor the service handed out. */
function badCursorQuery(plan: Plan, model: Model, query: string[]): string[] {
  const bad = plan.badCursor!;
  const c = plan.op.collection!;
  const own = model.pickCursor(bad.n, (k) => k.collection === c);
  const base = query.filter((q) => !/^(cursor|page)=/.test(q));
  // With no cursor handed out yet, any text is one this service never issued.
  const never = `eyJkIjoibiJ9.${'A'.repeat(22)}`;
  const token = own?.token ?? never;
  switch (bad.kind) {
    case 'altered': {
      const chars = [...token];
      const at = bad.at % chars.length;
      if (bad.how === 'cut') chars.splice(at, 1);
      else if (bad.how === 'add') chars.splice(at, 0, chars[at] === 'A' ? 'B' : 'A');
      else if (bad.how === 'dot') chars.splice(at, 0, '.');
      else chars[at] = chars[at] === 'A' ? 'B' : 'A';
      return [...(own ? own.bound : base), `cursor=${encodeURIComponent(chars.join(''))}`];
    }
    case 'otherQuery': {
      if (!own) return [...base, `cursor=${token}`];
      // Another ordering, search or filter: the cursor belongs to a different query.
      const has = (name: string) => own.bound.some((q) => q.startsWith(`${name}=`));
      const without = (name: string) => own.bound.filter((q) => !q.startsWith(`${name}=`));
      const filters = Object.keys(model.rules[c].filters);
      const how = bad.change % (filters.length ? 3 : 2);
      // (A search without terms, or none, is one search; so they are not swapped for each other.)
      if (how === 1) return [...without('search'), ...(own.query.terms.length ? [] : ['search=zz']), `cursor=${own.token}`];
      if (how === 2) {
        const name = filters[bad.change % filters.length];
        const p = plan.op.params.find((x) => x.name === name)!;
        const now = own.bound.find((q) => q.startsWith(`${name}=`))?.slice(name.length + 1);
        const range = model.rules[c].ranges.find((r) => r.includes(name));
        if (range) {
          // A bound dropped, or one added at the end of its range (so that no range turns upside down).
          if (now !== undefined) return [...without(name), `cursor=${own.token}`];
          const lower = range[0] === name;
          const edge = p.schema.format === 'date' ? (lower ? '1000-01-01' : '9999-12-31') : lower ? '0' : '99999999.99';
          return [...own.bound, `${name}=${edge}`, `cursor=${own.token}`];
        }
        const schema = p.schema as { type?: string; enum?: string[]; items?: { enum: string[] } };
        const values =
          schema.type === 'boolean'
            ? ['true', 'false']
            : schema.type === 'array'
              ? schema.items!.enum
              : schema.enum
                ? schema.enum
                : schema.type === 'integer'
                  ? ['1', '2']
                  : ['zz', 'zy'];
        const other = values.find((v) => encodeURIComponent(v) !== now)!;
        return [...without(name), `${name}=${encodeURIComponent(other)}`, `cursor=${own.token}`];
      }
      const ordering = plan.op.params.find((p) => p.name === 'ordering')!.schema;
      const fields = (ordering as { items: { enum: string[] } }).items.enum.filter((e) => !e.startsWith('-'));
      const field = fields[bad.change % fields.length];
      const other = has('ordering') ? (own.query.ordering![0] === field ? `-${field}` : field) : field === 'created_at' ? 'id' : field;
      return [...without('ordering'), `ordering=${encodeURIComponent(other)}`, `cursor=${own.token}`];
    }
    case 'otherCollection': {
      // A cursor of another collection, with a query that means the same there (none).
      const foreign = model.pickCursor(bad.n, (k) => k.collection !== c && k.bound.every((q) => /^page_size=/.test(q)));
      // With no foreign cursor handed out yet, one this service never issued (not our own, valid one).
      return [...base.filter((q) => /^page_size=/.test(q)), `cursor=${foreign?.token ?? never}`];
    }
    case 'withPage':
      return [...(own ? own.bound : base), `cursor=${bad.n % 2 || !own ? '' : own.token}`, `page=${bad.page}`];
  }
}

// --- Lists -------------------------------------------------------------------------------

function decode(v: string): string {
  return decodeURIComponent(v.replace(/\+/g, ' '));
}

/** The list query as the model reads it, from the query as sent. */
export function readQuery(op: Operation, query: string[]): { q: ListQuery; params: Map<string, string> } {
  const params = new Map<string, string>();
  for (const pair of query) {
    const eq = pair.indexOf('=');
    params.set(decode(pair.slice(0, eq)), decode(pair.slice(eq + 1)));
  }
  const q: ListQuery = { filters: {}, terms: [] };
  for (const p of queryParams(op)) {
    const v = params.get(p.name);
    if (v === undefined) continue;
    if (p.name === 'ordering') q.ordering = v.split(',');
    else if (p.name === 'search') q.terms = parseSearch(v);
    else if (['page', 'page_size', 'cursor'].includes(p.name)) continue;
    else q.filters[p.name] = p.schema.type === 'array' ? v.split(',') : p.schema.type === 'boolean' ? v === 'true' : v;
  }
  return { q, params };
}

/** Changes a filter value taken from a record a little, staying inside its schema (or not at all). */
function tweaked(
  value: FieldValue | undefined,
  tweak: number,
  schema: { maxLength?: number; minLength?: number; pattern?: string; format?: string; enum?: unknown[]; type?: string },
): string | undefined {
  if (value === null || value === undefined) return undefined;
  const s = String(value);
  // An enumerated or integer value has no near neighbour inside its schema: taken as it is.
  if (schema.enum || schema.type === 'integer') return s;
  if (schema.format === 'date') {
    const d = new Date(`${s}T00:00:00Z`);
    d.setUTCDate(d.getUTCDate() + (tweak % 3) - 1);
    const out = d.toISOString().slice(0, 10);
    return /^[1-9][0-9]{3}-/.test(out) ? out : s;
  }
  if (schema.pattern) {
    const cents = Math.round(Number(s) * 100) + (tweak % 3) - 1;
    const out = cents < 0 ? '0' : (cents / 100).toFixed(tweak % 2 ? 2 : cents % 100 ? 2 : 0);
    return new RegExp(schema.pattern).test(out) ? out : s;
  }
  const options = [
    s,
    s,
    s,
    `${s} `,
    s.replace(/\s+$/u, ''),
    `${s}\t`,
    s.toUpperCase(),
    s.toLowerCase(),
    ` ${s}`,
    [...s].slice(0, -1).join(''),
  ];
  const out = options[tweak % options.length];
  const length = [...out].length;
  return length >= (schema.minLength ?? 0) && length <= (schema.maxLength ?? Infinity) ? out : s;
}

/** The query of a list plan with the parts taken from the database filled in. */
function listQuery(plan: Plan, model: Model): { query: string[]; resumed?: IssuedCursor } {
  const c = plan.op.collection!;
  let query = [...plan.query];
  const set = (name: string, encoded: string) => {
    query = [...query.filter((q) => !q.startsWith(`${name}=`)), `${name}=${encoded}`];
  };
  if (plan.searchFrom) {
    const from = model.pick(c, plan.searchFrom.n);
    const value = [...String((from?.[plan.searchFrom.field] as FieldValue | undefined) ?? '')];
    const starts = value.map((ch, i) => i).filter((i) => !plan.searchFrom!.nonAscii || value[i].codePointAt(0)! > 0x7f);
    const start = starts.length ? starts[plan.searchFrom.start % starts.length] : 0;
    const piece = value.slice(start, start + Math.min(plan.searchFrom.length, 200)).join('');
    set('search', encodeLoose(piece));
    // On page 1, so that the record's page is there to be found.
    query = query.filter((q) => !q.startsWith('page='));
  }
  for (const f of plan.filterFrom ?? []) {
    const from = model.pick(c, f.n);
    const param = plan.op.params.find((p) => p.name === f.param)!;
    const rule = model.rules[c].filters[f.param];
    const value = tweaked(from?.[rule.field] as FieldValue | undefined, f.tweak, param.schema);
    if (value !== undefined) set(f.param, encodeLoose(value));
  }
  if (plan.cursor?.kind === 'resume') {
    const resumed = model.pickCursor(plan.cursor.n, (k) => k.collection === c);
    if (resumed) {
      const size = plan.cursor.pageSize;
      const bound = size === undefined ? resumed.bound : [...resumed.bound.filter((q) => !q.startsWith('page_size=')), `page_size=${size}`];
      return { query: [...bound, `cursor=${resumed.token}`], resumed };
    }
  }
  if (plan.cursor) {
    query = query.filter((q) => !q.startsWith('page='));
    set('cursor', '');
  }
  return { query };
}

/** The records of a page, by id, for messages. */
const ids = (rs: { id: number }[]) => JSON.stringify(rs.map((r) => r.id));

interface PageWant {
  page: Rec[];
  /** Records the server may or may not list (search outside ASCII), in order, around the page. */
  window: Rec[];
  next: boolean;
  previous: boolean;
}

/**
 * What a page in cursor mode must hold: the records strictly after (or, walking back, before) the
 * boundary record in the query's order, as many as the page size.
 */
function seek(pred: Prediction, variant: number, boundary: Record<string, unknown> | undefined, backward: boolean, size: number): PageWant {
  const list = pred.orders[variant];
  const cmp = pred.comparators[variant];
  if (!backward) {
    const after = boundary ? list.filter((r) => cmp(r, boundary) > 0) : list;
    return { page: after.slice(0, size), window: after, next: after.length > size, previous: boundary !== undefined };
  }
  const before = list.filter((r) => cmp(r, boundary!) < 0);
  return { page: before.slice(Math.max(0, before.length - size)), window: before, next: true, previous: before.length > size };
}

/** A listed record that is not as the model holds it. */
function staleProblem(results: Rec[], model: Model, c: string): string | undefined {
  const stale = results.find((r) => JSON.stringify(r) !== JSON.stringify(model.get(c, r.id)));
  return stale && `record ${stale.id} is not as the model holds it: ${JSON.stringify(model.get(c, stale.id))}`;
}

/**
 * Checks a page against what the model predicts, exactly when the model is sure of every match,
 * else as far as it can: the page is in order, holds every record that surely matches within
 * its span, and nothing the query excludes. Returns what is wrong, or undefined.
 */
function pageProblem(
  pred: Prediction,
  want: PageWant,
  results: Rec[],
  model: Model,
  c: string,
  backward: boolean,
  size: number,
  hasMoreLink: boolean,
): string | undefined {
  const stale = staleProblem(results, model, c);
  if (stale) return stale;
  if (pred.exact) {
    if (ids(results) !== ids(want.page)) return `want records ${ids(want.page)}, in this order`;
    return undefined;
  }
  // Nearest first, in the direction of travel.
  const window = backward ? [...want.window].reverse() : want.window;
  const got = backward ? [...results].reverse() : results;
  if (got.length > size) return `more than ${size} records`;
  let at = 0;
  for (const r of got) {
    const found = window.findIndex((w, i) => i >= at && w.id === r.id);
    if (found === -1) return `record ${r.id} is out of order or does not match; want a subsequence of ${ids(window)}`;
    const skipped = window.slice(at, found).find((w) => pred.sure.has(w.id));
    if (skipped) return `record ${skipped.id} matches for sure and was skipped`;
    at = found + 1;
  }
  if (got.length < size || !hasMoreLink) {
    const missing = window.slice(at).find((w) => pred.sure.has(w.id));
    if (missing) return `record ${missing.id} matches for sure and is missing at the end`;
  }
  return undefined;
}

function linkProblem(
  link: string | null,
  sender: Sender,
  op: Operation,
  sentParams: Map<string, string>,
  page: string,
): string | undefined {
  if (link === null) return undefined;
  const url = new URL(link);
  if (url.origin !== sender.baseUrl || url.pathname !== op.path) return `${link} is not ${sender.baseUrl}${op.path}`;
  const kept = (m: Iterable<[string, string]>) =>
    [...m]
      .filter(([k]) => k !== 'page' && k !== 'cursor')
      .map(([k, v]) => `${k}=${v}`)
      .sort();
  if (JSON.stringify(kept(url.searchParams)) !== JSON.stringify(kept(sentParams)))
    return `${link} must keep every other parameter: ${JSON.stringify(kept(sentParams))}`;
  if (page === 'cursor')
    return url.searchParams.get('cursor') && !url.searchParams.has('page') ? undefined : `${link} must carry a cursor and no page`;
  return url.searchParams.get('page') === page && !url.searchParams.has('cursor') ? undefined : `${link} must be page ${page}`;
}

async function runList(plan: Plan, model: Model, sender: Sender): Promise<void> {
  const { op } = plan;
  const c = op.collection!;
  const { query, resumed } = listQuery(plan, model);
  const { q, params } = readQuery(op, query);
  const pred = model.predict(c, q);
  const sent: Sent = { method: 'GET', path: op.path, query };
  const answer = await sender.send(sent);
  let must = checker(plan, sent, answer);
  const mode = params.has('cursor') ? (resumed ? 'cursor resume' : 'cursor') : 'page';
  sender.tally(
    `valid list ${mode}${q.ordering ? ' ordering' : ''}${Object.keys(q.filters).length ? ' filtered' : ''}${q.terms.length ? ' search' : ''} ${answer.status}`,
  );

  // Problems that no schema states: a range upside down, a cursor beside a page.
  const problems = [...model.invertedRanges(c, q.filters), ...(params.has('cursor') && params.has('page') ? ['cursor'] : [])];
  if (problems.length) {
    must(answer.status === 400, `want 400 naming ${problems.join(' and ')}`);
    return void must(
      problems.every((p) => named(answer).includes(p)),
      `the 400 must name ${problems.join(' and ')}, names ${JSON.stringify(named(answer))}`,
    );
  }
  const sizeDefault = op.params.find((p) => p.name === 'page_size')!.schema.default as number;
  const size = Number(params.get('page_size') ?? sizeDefault);
  const variants = pred.orders.map((_, i) => i);
  /** Passes when one reading of the ordering explains the answer. */
  const anyVariant = (problem: (variant: number) => string | undefined) => {
    const found = variants.map(problem);
    if (found.some((p) => p === undefined)) return;
    must(false, found[0]!);
  };

  if (mode === 'page') {
    const page = Number(params.get('page') ?? 1);
    const offset = (page - 1) * size;
    const sure = pred.sure.size;
    if (answer.status === 404)
      return void must(
        page > 1 && (pred.exact ? offset >= pred.orders[0].length : offset >= sure),
        `a 404 list must be past the end (${pred.orders[0].length} records match${pred.exact ? '' : ', some maybe'})`,
      );
    must(answer.status === 200, 'want 200');
    const { count, results, next, previous } = answer.body;
    if (pred.exact) must(count === pred.orders[0].length, `count ${count}, the model counts ${pred.orders[0].length}`);
    else must(count >= sure && count <= pred.orders[0].length, `count ${count}: want ${sure} to ${pred.orders[0].length}`);
    must(page === 1 || offset < count, `page ${page} of ${size} is past the last one (${count} records): want 404`);
    must(results.length === Math.max(0, Math.min(size, count - offset)), `page of ${size} at ${offset} out of ${count}`);
    must((next !== null) === offset + size < count && (previous !== null) === page > 1, 'next and previous');
    for (const [link, to] of [
      [next, page + 1],
      [previous, page - 1],
    ] as const) {
      const p = linkProblem(link, sender, op, params, String(to));
      must(p === undefined, p!);
    }
    const stale = staleProblem(results, model, c);
    must(stale === undefined, stale!);
    if (pred.exact)
      return anyVariant((v) =>
        ids(results) === ids(pred.orders[v].slice(offset, offset + size))
          ? undefined
          : `want records ${ids(pred.orders[v].slice(offset, offset + size))}, in this order`,
      );
    // Not sure of every match: the page is a run of the candidates in order, skipping none that surely match.
    return anyVariant((v) => {
      const list = pred.orders[v];
      const first = results.length ? list.findIndex((r) => r.id === results[0].id) : list.length;
      if (first === -1) return `record ${results[0].id} does not match`;
      if (offset > 0 || results.length === 0)
        return pageProblem(
          pred,
          { page: [], window: list.slice(first), next: false, previous: false },
          results,
          model,
          c,
          false,
          size,
          next !== null,
        );
      return pageProblem(pred, { page: [], window: list, next: false, previous: false }, results, model, c, false, size, next !== null);
    });
  }

  // Cursor mode: one page, then (from `cursor=`) a walk along `next` and back along `previous`.
  let boundary = resumed?.boundary;
  let backward = resumed?.direction === 'p';
  let current = answer;
  const walk = plan.cursor?.kind === 'start' ? plan.cursor.pages : 0;
  let forwardSteps = 0;
  let backSteps = 0;
  for (;;) {
    must(current.status === 200, 'want 200');
    const { count, results, next, previous } = current.body;
    must(count === null, 'count is null in cursor mode');
    anyVariant((v) => {
      const want = seek(pred, v, boundary, backward, size);
      const wrong = pageProblem(pred, want, results, model, c, backward, size, (backward ? previous : next) !== null);
      if (wrong)
        return `${backward ? 'before' : 'after'} ${boundary ? `record ${JSON.stringify(boundary).slice(0, 300)}` : 'the start'}: ${wrong}`;
      if (pred.exact && ((next !== null) !== want.next || (previous !== null) !== want.previous))
        return `want ${want.next ? 'a' : 'no'} next and ${want.previous ? 'a' : 'no'} previous link`;
      if (!backward && boundary === undefined && previous !== null) return 'the first page has no previous page';
      return undefined;
    });
    for (const link of [next, previous]) {
      const p = linkProblem(link, sender, op, params, 'cursor');
      must(p === undefined, p!);
    }
    // Cursors for later: bound to this query, starting from the record at the page's edge.
    const edge = (dir: 'n' | 'p') => (results.length ? (dir === 'n' ? results[results.length - 1] : results[0]) : boundary);
    for (const [link, dir] of [
      [next, 'n'],
      [previous, 'p'],
    ] as const) {
      if (link === null || !edge(dir)) continue;
      const url = new URL(link);
      const bound = [...url.searchParams].filter(([k]) => k !== 'cursor').map(([k, v]) => `${encodeURIComponent(k)}=${encodeLoose(v)}`);
      model.issue({ collection: c, token: url.searchParams.get('cursor')!, direction: dir, bound, query: q, boundary: { ...edge(dir) } });
    }
    // Forward `walk` pages (while there are more), then back along `previous` as far.
    let link: string | null = null;
    if (!backward && forwardSteps + 1 < walk && next !== null) {
      link = next;
      forwardSteps++;
      boundary = edge('n');
    } else if (walk > 0 && previous !== null && backSteps < walk) {
      link = previous;
      backSteps++;
      backward = true;
      boundary = edge('p');
    }
    if (link === null) return;
    const url = new URL(link);
    const followed: Sent = { method: 'GET', path: url.pathname, query: url.search.slice(1).split('&') };
    current = await sender.send(followed);
    must = checker(plan, followed, current);
    sender.tally(`valid list cursor ${backward ? 'previous' : 'next'} ${current.status}`);
  }
}

// --- Several requests at once ------------------------------------------------------------

/** Creates with one new key and one body at once: one creates, the others replay it or are told it runs (409). */
async function raceCreates(plan: Plan, model: Model, sender: Sender): Promise<void> {
  const { op } = plan;
  const c = op.collection!;
  const race = plan.race as Extract<Plan['race'], { kind: 'creates' }>;
  const sent: Sent = { method: 'POST', path: op.path, query: [], body: { json: plan.body }, headers: { 'Idempotency-Key': race.key } };
  const answers = await Promise.all(Array.from({ length: race.copies }, () => sender.send(sent)));
  const all: Answer = {
    status: 0,
    headers: new Headers(),
    body: answers.map((a) => ({ status: a.status, replayed: a.headers.get('idempotent-replayed'), body: a.body })),
  };
  const must = checker(plan, { ...sent, method: `${race.copies} x POST` }, all);
  sender.tally(
    `race creates ${answers
      .map((a) => a.status)
      .sort()
      .join(',')}`,
  );
  if (model.remembered(c, race.key)) return;
  const fields = model.written(c, plan.body as Record<string, unknown>, true);
  const conflicts = model.conflicts(c, fields);
  if (conflicts.length) {
    return void must(
      answers.every((a) => a.status === 409 && named(a).some((f) => conflicts.includes(f) || f === 'Idempotency-Key')),
      `${conflicts.join(',')} taken: every one must be 409`,
    );
  }
  const fresh = answers.filter((a) => a.status === 201 && a.headers.get('idempotent-replayed') === null);
  must(fresh.length === 1, 'exactly one of the creates with one Idempotency-Key creates');
  const first = fresh[0];
  for (const a of answers) {
    if (a === first) continue;
    if (a.status === 409) must(named(a).includes('Idempotency-Key'), 'a 409 while the first create runs names Idempotency-Key');
    else
      must(
        a.status === 201 &&
          a.headers.get('idempotent-replayed') === 'true' &&
          JSON.stringify(a.body) === JSON.stringify(first.body) &&
          a.headers.get('location') === first.headers.get('location') &&
          a.headers.get('etag') === first.headers.get('etag'),
        'the others replay the first answer, or are 409',
      );
  }
  const v = versionOf(first);
  must(v !== undefined, 'a created record has an ETag');
  const json = JSON.parse(JSON.stringify(plan.body));
  model.remember(c, race.key, {
    canon: canonical(json),
    body: json,
    answer: { body: first.body, location: first.headers.get('location'), etag: first.headers.get('etag') },
  });
  model.set(c, first.body, v!);
}

/** Writes with the record's current ETag at once: exactly one succeeds, the others are 412. */
async function raceWrites(plan: Plan, model: Model, sender: Sender): Promise<void> {
  const { op } = plan;
  const c = op.collection!;
  const race = plan.race as Extract<Plan['race'], { kind: 'writes' }>;
  const target = model.pick(c, race.n);
  const id = target?.id ?? 1e15 + race.n;
  const version = target ? model.version(c, id) : 1;
  if (version === undefined) return;
  const headers = { 'If-Match': `"${version}"` };
  // Each PATCH writes a field's own value back (an empty PATCH would write nothing, and all win).
  const [field, value] = Object.entries(model.written(c, target ?? {}, false)).find(([, v]) => typeof v === 'string') ?? [];
  const same = field ? { [field]: value } : {};
  const requests: Sent[] = race.deletes.map((del) =>
    del
      ? { method: 'DELETE', path: op.path.replace('{id}', String(id)), query: [], headers }
      : { method: 'PATCH', path: op.path.replace('{id}', String(id)), query: [], body: { json: same }, headers },
  );
  const answers = await Promise.all(requests.map((r) => sender.send(r)));
  const all: Answer = {
    status: 0,
    headers: new Headers(),
    body: answers.map((a) => ({ status: a.status, etag: a.headers.get('etag'), body: a.body })),
  };
  const must = checker(plan, { ...requests[0], method: race.deletes.map((d) => (d ? 'DELETE' : 'PATCH')).join('+') }, all);
  sender.tally(
    `race writes ${answers
      .map((a) => a.status)
      .sort()
      .join(',')}`,
  );
  if (!target)
    return void must(
      answers.every((a) => a.status === 412),
      'no record: every conditional write is 412',
    );
  const won = answers.map((a, i) => [a, requests[i]] as const).filter(([a]) => a.status === 200 || a.status === 204);
  must(
    won.length === 1 && answers.every((a) => a.status === 412 || won[0][0] === a),
    `of ${answers.length} writes with ETag "${version}", exactly one succeeds and the others are 412`,
  );
  const [answer, request] = won[0];
  if (request.method === 'DELETE') {
    must(answer.status === 204, 'DELETE: 204');
    return model.remove(c, id);
  }
  must(answer.status === 200 && answer.headers.get('etag') === `"${version + 1}"`, `PATCH: 200 with ETag "${version + 1}"`);
  const { updated_at: _u, ...rest } = answer.body;
  const { updated_at: _t, ...before } = target;
  must(JSON.stringify(rest) === JSON.stringify(before), 'a PATCH of a field to its own value changes only updated_at');
  model.set(c, answer.body, version + 1);
}

/** Reads every record of a collection through the API, following `next`. */
export async function readAll(sender: Sender, listOp: Operation): Promise<Rec[]> {
  const max = listOp.params.find((p) => p.name === 'page_size')!.schema.maximum!;
  const out: Rec[] = [];
  for (let page = 1; ; page++) {
    const res = await sender.send({ method: 'GET', path: listOp.path, query: [`page_size=${max}`, `page=${page}`] });
    if (res.status !== 200) throw new Error(`listing ${listOp.path} page ${page}: ${res.status}`);
    out.push(...res.body.results);
    if (!res.body.next) return out;
  }
}
