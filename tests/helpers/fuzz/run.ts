import { parseSearch } from '../../../src/db/search';
import { assertMatchesContract } from '../contract';
import { type Model, type Rec, sameValue } from './model';
import { encodeLoose, type Plan } from './plans';
import type { Operation } from './spec';

export interface Answer {
  status: number;
  body: any;
}

/** Sends requests to the app under test; every answer is checked against the spec first. */
export class Sender {
  count = 0;
  /** How many answers of each kind (`valid create 201`), for the closing line. */
  readonly tallies = new Map<string, number>();
  constructor(private readonly baseUrl: string) {}

  tally(kind: string): void {
    this.tallies.set(kind, (this.tallies.get(kind) ?? 0) + 1);
  }

  async send(method: string, path: string, query: string[], body?: { json?: unknown; raw?: string }): Promise<Answer> {
    this.count++;
    const payload = body?.raw ?? (body && body.json !== undefined ? JSON.stringify(body.json) : undefined);
    const headers: Record<string, string> = payload === undefined ? {} : { 'content-type': 'application/json' };
    const res = await fetch(`${this.baseUrl}${path}${query.length ? `?${query.join('&')}` : ''}`, { method, headers, body: payload, redirect: 'manual' });
    const text = await res.text();
    const parsed = (res.headers.get('content-type') ?? '').includes('json') && text ? JSON.parse(text) : text;
    await assertMatchesContract({ method, path, status: res.status, headers: res.headers, body: parsed });
    return { status: res.status, body: parsed };
  }
}

export class Mismatch extends Error {}

function fail(plan: Plan, sent: string, why: string, answer: Answer): never {
  const body = JSON.stringify(answer.body);
  throw new Mismatch(`${plan.op.id} ${sent}\n${why}\nanswer: ${answer.status} ${body.length > 2000 ? `${body.slice(0, 2000)}...` : body}`);
}

type Verb = 'list' | 'create' | 'get' | 'replace' | 'update' | 'delete' | 'service';

function verbOf(op: Operation): Verb {
  if (!op.collection) return 'service';
  const item = op.path.includes('{');
  return ({ GET: item ? 'get' : 'list', POST: 'create', PUT: 'replace', PATCH: 'update', DELETE: 'delete' } as const)[op.method as 'GET'] ?? 'service';
}

/** Sends one plan and checks the answer against what the contract and the model say it must be. */
export async function runPlan(plan: Plan, model: Model, sender: Sender): Promise<void> {
  const { op } = plan;
  const c = op.collection!;
  const verb = verbOf(op);
  let target: Rec | undefined;
  let idText = '';
  if (plan.id?.kind === 'known') {
    target = model.pick(c, plan.id.n);
    idText = String(target?.id ?? 1e15 + plan.id.n);
    target ??= model.get(c, Number(idText));
  } else if (plan.id?.kind === 'any') {
    target = model.get(c, plan.id.id);
    idText = String(plan.id.id);
  } else if (plan.id?.kind === 'odd') idText = plan.id.raw;

  let body = plan.body;
  if (plan.collide && body && typeof body === 'object') {
    const other = model.pick(c, plan.collide.n);
    const value = other?.[plan.collide.field];
    const folds = model.rules[c].fields[plan.collide.field].format === 'email';
    if (typeof value === 'string') body = { ...body, [plan.collide.field]: plan.collide.upper && folds ? value.toUpperCase() : value };
  }
  const query = [...plan.query];
  if (plan.searchFrom) {
    const from = model.pick(c, plan.searchFrom.n);
    const value = [...String(from?.[plan.searchFrom.field] ?? '')];
    const starts = value.map((ch, i) => i).filter((i) => !plan.searchFrom!.nonAscii || value[i].codePointAt(0)! > 0x7f);
    const start = starts.length ? starts[plan.searchFrom.start % starts.length] : 0;
    const piece = value.slice(start, start + Math.min(plan.searchFrom.length, 200)).join('');
    // On page 1, so that the record's page is there to be found.
    query.splice(0, query.length, ...query.filter((q) => !/^(search|page)=/.test(q)), `search=${encodeLoose(piece)}`);
  }

  const path = op.path.replace('{id}', idText);
  const sent = `${op.method} ${path}${query.length ? `?${query.join('&')}` : ''} ${plan.raw !== undefined ? `raw ${JSON.stringify(plan.raw).slice(0, 300)}` : JSON.stringify(body)?.slice(0, 300) ?? ''}`;
  const answer = await sender.send(op.method, path, query, op.body ? { json: body, raw: plan.raw } : undefined);
  const must = (ok: boolean, why: string) => ok || fail(plan, sent, why, answer);
  sender.tally(`${plan.broken ? 'broken' : plan.searchFrom ? 'searchFrom' : 'valid'} ${verb} ${answer.status}`);

  if (plan.broken) {
    const { status, field, why } = plan.broken;
    must(answer.status === status, `broken (${why}): want ${status}`);
    if (field !== undefined) {
      const fields = (answer.body.errors ?? []).map((e: { field: string }) => e.field);
      must(fields.includes(field), `broken (${why}): the problem must name ${JSON.stringify(field)}, names ${JSON.stringify(fields)}`);
    }
    return;
  }

  if (verb === 'service') return void must(answer.status === 200, 'want 200');
  if (verb === 'list') return checkList(plan, model, query, answer, must);
  if (verb === 'create' || ((verb === 'replace' || verb === 'update') && target)) {
    const fields = model.written(c, body as Record<string, unknown>, verb !== 'update');
    const conflicts = model.conflicts(c, fields, target?.id);
    if (conflicts.length) {
      must(answer.status === 409, `${conflicts.join(', ')} taken: want 409`);
      return void must(conflicts.includes(answer.body.errors?.[0]?.field), `the 409 must name one of ${conflicts}`);
    }
    must(answer.status === (verb === 'create' ? 201 : 200), `want ${verb === 'create' ? 201 : 200}`);
    const want = { ...(verb === 'update' ? target : {}), ...fields };
    for (const [k, v] of Object.entries(want)) {
      if (k !== 'updated_at') must(sameValue(v, answer.body[k]), `${k}: sent ${JSON.stringify(v)}, answered ${JSON.stringify(answer.body[k])}`);
    }
    if (target) must(answer.body.created_at === target.created_at && answer.body.updated_at >= target.updated_at, 'timestamps');
    return model.set(c, answer.body);
  }
  if (!target) return void must(answer.status === 404, `no record ${idText}: want 404`);
  if (verb === 'get') return void must(answer.status === 200 && JSON.stringify(answer.body) === JSON.stringify(target), `want 200 and ${JSON.stringify(target)}`);
  must(answer.status === 204, 'want 204');
  model.remove(c, target.id);
}

function checkList(plan: Plan, model: Model, query: string[], answer: Answer, must: (ok: boolean, why: string) => unknown): void {
  const c = plan.op.collection!;
  const param = (name: string) => query.find((q) => q.startsWith(`${name}=`))?.slice(name.length + 1);
  const page = Number(param('page') ?? 1);
  const sizeDefault = plan.op.params.find((p) => p.name === 'page_size')!.schema.default as number;
  const size = Number(param('page_size') ?? sizeDefault);
  const search = param('search');
  const searched = search !== undefined && parseSearch(decodeURIComponent(search.replace(/\+/g, ' '))).length > 0;
  const all = model.listed(c);
  const offset = (page - 1) * size;
  if (answer.status === 404) return void must(page > 1 && (searched || offset >= all.length), 'a 404 list must be past the end');
  must(answer.status === 200, 'want 200');
  const { count, results, next, previous } = answer.body;
  if (!searched) {
    must(count === all.length, `count ${count}, the database holds ${all.length}`);
    must(JSON.stringify(results) === JSON.stringify(all.slice(offset, offset + size)), 'want the records in order');
  } else {
    must(count <= all.length, 'count exceeds the records');
    const order = all.map((r) => r.id);
    must(results.every((r: Rec, i: number) => JSON.stringify(r) === JSON.stringify(model.get(c, r.id)) && (i === 0 || order.indexOf(r.id) > order.indexOf(results[i - 1].id))), 'results must be known records, newest first');
    if (plan.searchFrom) must(count >= 1, 'a search for a piece of a record must find it');
  }
  must(results.length === Math.max(0, Math.min(size, count - offset)), `page of ${size} at ${offset} out of ${count}`);
  must((next !== null) === offset + size < count && (previous !== null) === page > 1, 'next and previous');
}

/** Reads every record of a collection through the API, following `next`. */
export async function readAll(sender: Sender, listOp: Operation): Promise<Rec[]> {
  const max = listOp.params.find((p) => p.name === 'page_size')!.schema.maximum!;
  const out: Rec[] = [];
  for (let page = 1; ; page++) {
    const res = await sender.send('GET', listOp.path, [`page_size=${max}`, `page=${page}`]);
    if (res.status !== 200) throw new Error(`listing ${listOp.path} page ${page}: ${res.status}`);
    out.push(...res.body.results);
    if (!res.body.next) return out;
  }
}
