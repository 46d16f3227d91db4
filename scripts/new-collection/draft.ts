// A collection as `npm run new-collection` is told it: its name and one short line per field
// (`author string(50) required search sort filter`), checked against what the service, its seed
// and the generic tests support, before anything is written.

export type FieldType = 'string' | 'text' | 'integer' | 'decimal' | 'boolean' | 'date' | 'email' | 'enum';
/** `range`: a lower and an upper bound, two parameters; `stock`: `true` above 0, `false` at 0. */
export type FilterKind = 'eq' | 'in' | 'range' | 'stock';
export type DefaultValue = string | number | boolean | null;

export interface FieldDraft {
  name: string;
  type: FieldType;
  /** string: characters. */
  minLength?: number;
  maxLength?: number;
  /** integer: the bounds (an INT column). */
  minimum?: number;
  maximum?: number;
  /** enum: the values, in rank order. */
  values?: string[];
  pattern?: string;
  required: boolean;
  /** What a create or replace that leaves the field out stores (optional fields only). */
  default?: DefaultValue;
  example?: string;
  search: boolean;
  sort: boolean;
  /** An enum sorted by its values' order, not as text. */
  rank: boolean;
  unique: boolean;
  filter?: FilterKind;
}

export interface Draft {
  /** Path segment and table name: `comments`. */
  name: string;
  /** Schema name: `Comment`. */
  resource: string;
  /** In operationIds: `listComments`. */
  plural: string;
  /** In prose: `comment`, `comments`. */
  singularWords: string;
  pluralWords: string;
  /** The page_size maximum: 100 (posts alone are served 10 a page). */
  maxPageSize: 10 | 100;
  fields: FieldDraft[];
}

export const INT_MAX = 2_147_483_647;
/** A decimal as the spec takes it: `0.00` to `99999999.99`, at most 2 decimals (a DECIMAL(10, 2) column). */
export const DECIMAL_PATTERN = '^(0|[1-9][0-9]{0,7})(\\.[0-9]{1,2})?$';
const FIELD_NAME = /^[a-z][a-z0-9_]*$/;
/** Set by the service, or list parameters a field's filter would collide with. */
const RESERVED = ['id', 'created_at', 'updated_at', 'version', 'page', 'page_size', 'cursor', 'search', 'ordering'];

export const USAGE = `usage: npm run new-collection -- <name> --field '<field> <type> [flags]'... [--resource R] [--plural P] [--dry-run]
  <name>: the path segment and table name, lower case, plural (comments, blog_posts), at most 20 characters.
  types:  string(MAX) or string(MIN..MAX), text, integer or integer(MIN..MAX), decimal (0.00 to 99999999.99),
          boolean, date, email, enum(a,b,c)
  flags:  required           a create or replace must send it; otherwise it takes its default
          default=VALUE      the default of an optional field (else '', 0, false, null, the first enum value)
          search             searched by ?search=
          sort               in ?ordering= (sort=rank: an enum by the order of its values)
          filter[=KIND]      a list filter: eq (string, integer, date, enum), in (enum),
                             range (integer, decimal, date: two bounds), stock (integer: ?in_FIELD=true|false);
                             without KIND: in for an enum, range for numbers and dates, else eq
          unique             no two records share it (a required string or email)
          pattern=REGEX      a required string must match it
          example=VALUE      the spec's example value`;

export class DraftError extends Error {}

function fail(message: string): never {
  throw new DraftError(message);
}

function pascal(name: string): string {
  return name
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}

/** `Comments` to `Comment`, `Categories` to `Category`; undefined where English needs a person. */
function singular(plural: string): string | undefined {
  if (/ies$/.test(plural)) return plural.replace(/ies$/, 'y');
  if (/(ss|x|ch|sh)es$/.test(plural)) return plural.replace(/es$/, '');
  if (/[^s]s$/.test(plural)) return plural.slice(0, -1);
  return undefined;
}

function words(pascalName: string): string {
  return pascalName.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
}

function parseType(field: string, token: string): Pick<FieldDraft, 'type' | 'minLength' | 'maxLength' | 'minimum' | 'maximum' | 'values'> {
  const m = /^(\w+)(?:\((.*)\))?$/.exec(token);
  if (!m) fail(`${field}: no type in ${JSON.stringify(token)}`);
  const [, type, args] = m;
  const range = (what: string) => {
    const r = /^(-?\d+)(?:\.\.(-?\d+))?$/.exec(args ?? '');
    if (!r) fail(`${field}: ${what} takes (MAX) or (MIN..MAX), not (${args})`);
    return r[2] === undefined ? [undefined, Number(r[1])] : [Number(r[1]), Number(r[2])];
  };
  switch (type) {
    case 'string': {
      if (args === undefined) fail(`${field}: a string needs its maximum length, string(100); unbounded text is text`);
      const [minLength, maxLength] = range('string');
      if (maxLength! < 1 || maxLength! > 10_000 || (minLength ?? 0) < 0 || (minLength ?? 0) > maxLength!)
        fail(`${field}: string lengths must be 0 <= MIN <= MAX <= 10000`);
      return { type, minLength, maxLength };
    }
    case 'integer': {
      const [minimum, maximum] = args === undefined ? [0, INT_MAX] : range('integer');
      const low = minimum ?? 0;
      if (low < -INT_MAX - 1 || maximum! > INT_MAX || low > maximum!) fail(`${field}: integer bounds must fit an INT column, MIN <= MAX`);
      return { type, minimum: low, maximum };
    }
    case 'enum': {
      const values = (args ?? '').split(',').filter(Boolean);
      if (values.length < 2 || values.some((v) => !/^[A-Za-z0-9_.-]{1,50}$/.test(v)) || new Set(values).size < values.length)
        fail(`${field}: enum takes two or more distinct values of letters, digits, _ . -, e.g. enum(todo,done)`);
      return { type, values };
    }
    case 'text':
    case 'decimal':
    case 'boolean':
    case 'date':
    case 'email':
      if (args !== undefined) fail(`${field}: ${type} takes no (...)`);
      return { type };
    default:
      fail(`${field}: unknown type ${type}: string(N), text, integer, decimal, boolean, date, email or enum(a,b)`);
  }
}

function parseDefault(f: FieldDraft, raw: string): DefaultValue {
  if (f.type === 'integer' && /^-?\d+$/.test(raw)) return Number(raw);
  if (f.type === 'boolean' && (raw === 'true' || raw === 'false')) return raw === 'true';
  if (f.type === 'date' && raw === 'null') return null;
  if (['string', 'text', 'decimal', 'enum'].includes(f.type)) return raw;
  fail(`${f.name}: ${JSON.stringify(raw)} is no default for ${f.type}${f.type === 'date' ? ' (a date defaults to null)' : ''}`);
}

/** One `--field`: `<name> <type> [flags...]`, separated by spaces. */
export function parseField(line: string): FieldDraft {
  const [name, type, ...flags] = line.trim().split(/\s+/);
  if (!name || !type) fail(`--field ${JSON.stringify(line)}: give a name and a type, e.g. --field 'author string(50) required'`);
  if (!FIELD_NAME.test(name) || name.length > 64) fail(`${name}: a field name is lower case letters, digits and _`);
  if (RESERVED.includes(name)) fail(`${name}: the service sets or uses that name`);
  const f: FieldDraft = { name, ...parseType(name, type), required: false, search: false, sort: false, rank: false, unique: false };
  let rawDefault: string | undefined;
  for (const flag of flags) {
    const [key, value] = flag.includes('=') ? [flag.slice(0, flag.indexOf('=')), flag.slice(flag.indexOf('=') + 1)] : [flag, undefined];
    if (key === 'required' && value === undefined) f.required = true;
    else if (key === 'search' && value === undefined) f.search = true;
    else if (key === 'unique' && value === undefined) f.unique = true;
    else if (key === 'sort' && (value === undefined || value === 'rank')) [f.sort, f.rank] = [true, value === 'rank'];
    else if (key === 'filter' && (value === undefined || ['eq', 'in', 'range', 'stock'].includes(value)))
      f.filter = (value ?? 'auto') as FilterKind;
    else if (key === 'default' && value !== undefined) rawDefault = value;
    else if (key === 'pattern' && value) f.pattern = value;
    else if (key === 'example' && value !== undefined) f.example = value;
    else fail(`${name}: unknown flag ${flag}`);
  }
  if ((f.filter as string) === 'auto')
    f.filter =
      f.type === 'enum' ? 'in' : ['integer', 'decimal', 'date'].includes(f.type) ? 'range' : f.type === 'boolean' ? undefined : 'eq';
  check(
    f,
    flags.some((x) => x.startsWith('filter')),
    rawDefault,
  );
  if (!f.required) f.default = rawDefault === undefined ? implicitDefault(f) : parseDefault(f, rawDefault);
  if (f.default !== undefined) checkDefault(f);
  return f;
}

function implicitDefault(f: FieldDraft): DefaultValue {
  switch (f.type) {
    case 'integer':
      return Math.min(Math.max(0, f.minimum!), f.maximum!);
    case 'decimal':
      return '0.00';
    case 'boolean':
      return false;
    case 'date':
      return null;
    case 'enum':
      return f.values![0];
    default:
      return '';
  }
}

/** What the table, the seed and the generic suites support; each refusal says why. */
function check(f: FieldDraft, filtered: boolean, rawDefault: string | undefined): void {
  const n = f.name;
  if (f.required && rawDefault !== undefined) fail(`${n}: a required field has no default`);
  if (f.search && !['string', 'text', 'email'].includes(f.type)) fail(`${n}: only string, text and email fields are searched`);
  if (f.sort && ['text', 'boolean'].includes(f.type)) fail(`${n}: a ${f.type} field is not sortable`);
  if (f.rank && f.type !== 'enum') fail(`${n}: sort=rank sorts an enum by its values' order`);
  if (filtered && !f.filter)
    fail(`${n}: a boolean filter is not supported (the list model compares eq filters as text); filter=stock filters an integer`);
  const noEq: Record<string, string> = {
    text: 'long text is searched',
    email: 'emails compare ignoring case',
    boolean: 'the list model compares eq filters as text',
    decimal: 'the column answers `5.00` where the query says `5`: use filter=range',
  };
  if (f.filter === 'eq' && noEq[f.type]) fail(`${n}: no eq filter on ${f.type} (${noEq[f.type]})`);
  if (f.filter === 'in' && f.type !== 'enum') fail(`${n}: filter=in takes an enum`);
  if (f.filter === 'range' && !['integer', 'decimal', 'date'].includes(f.type))
    fail(`${n}: filter=range takes an integer, a decimal or a date`);
  if (f.filter === 'stock' && f.type !== 'integer') fail(`${n}: filter=stock takes an integer`);
  if (f.unique && !(f.required && ['string', 'email'].includes(f.type)))
    fail(`${n}: unique fields are required strings or emails (a default would repeat)`);
  if (f.pattern !== undefined && (f.type !== 'string' || !f.required)) fail(`${n}: pattern= is for a required string`);
  if (f.pattern !== undefined) {
    try {
      new RegExp(f.pattern, 'u');
    } catch {
      fail(`${n}: pattern= is not a regular expression`);
    }
    if (f.example === undefined) fail(`${n}: a patterned field needs example=, a value that matches it`);
  }
  if (f.type === 'email' && !f.required) fail(`${n}: an email field is required ('' is no email)`);
}

function checkDefault(f: FieldDraft): void {
  const d = f.default;
  const bad = (why: string) => fail(`${f.name}: default=${String(d)} ${why}`);
  if (f.type === 'string' && typeof d === 'string' && [...d].length > f.maxLength!) bad('is longer than the field');
  if (f.type === 'string' && d === '' && (f.minLength ?? 0) > 0) bad(`is shorter than ${f.minLength}`);
  if (f.type === 'integer' && ((d as number) < f.minimum! || (d as number) > f.maximum!)) bad('is out of bounds');
  if (f.type === 'decimal' && !new RegExp(DECIMAL_PATTERN).test(String(d))) bad('is no decimal of at most 2 places');
  if (f.type === 'enum' && !f.values!.includes(String(d))) bad('is none of the values');
}

/** The whole command line but the flags that `npm run new-collection` itself reads. */
export function draftOf(
  name: string,
  fieldLines: string[],
  options: { resource?: string; plural?: string; maxPageSize?: 10 | 100 } = {},
): Draft {
  if (!/^[a-z][a-z0-9_]*$/.test(name) || name.length > 20)
    fail(`${JSON.stringify(name)}: a collection name is lower case letters, digits and _, at most 20 (it names its table)`);
  const plural = options.plural ?? pascal(name);
  const resource = options.resource ?? singular(plural);
  if (!resource) fail(`${name}: give --resource, the singular (Person for people)`);
  if (!/^[A-Z][A-Za-z0-9]*$/.test(resource) || !/^[A-Z][A-Za-z0-9]*$/.test(plural)) fail('--resource and --plural are PascalCase');
  if (resource === plural) fail('--resource and --plural must differ: operationIds are made of them');
  const fields = fieldLines.map(parseField);
  if (!fields.length) fail(`no --field: a collection has at least one\n${USAGE}`);
  const names = fields.map((f) => f.name);
  const twice = names.find((x, i) => names.indexOf(x) !== i);
  if (twice) fail(`${twice}: named twice`);
  if (!fields.some((f) => f.search)) fail('no field is searched: mark one or more with search');
  const params = filterParams(fields).map((p) => p.param);
  const clash = params.find((p, i) => params.indexOf(p) !== i || RESERVED.includes(p));
  if (clash) fail(`two filters, or a filter and a list parameter, are both named ${clash}`);
  return {
    name,
    resource,
    plural,
    singularWords: words(resource),
    pluralWords: name.replace(/_/g, ' '),
    maxPageSize: options.maxPageSize ?? 100,
    fields,
  };
}

export interface FilterParam {
  /** The query parameter. */
  param: string;
  field: FieldDraft;
  op: 'eq' | 'gte' | 'lte' | 'in' | 'stock';
}

/**
 * The list's filter parameters, in field order, named as the first collections name theirs:
 * `author`; `min_price` and `max_price`; `published_after` and `published_before` for
 * `published_date`; `in_stock` for `stock`.
 */
export function filterParams(fields: FieldDraft[]): FilterParam[] {
  return fields.flatMap((field): FilterParam[] => {
    const n = field.name;
    if (field.filter === 'eq' || field.filter === 'in') return [{ param: n, field, op: field.filter }];
    if (field.filter === 'stock') return [{ param: `in_${n}`, field, op: 'stock' }];
    if (field.filter !== 'range') return [];
    const [low, high] =
      field.type === 'date'
        ? [`${n.replace(/_(date|at|on)$/, '')}_after`, `${n.replace(/_(date|at|on)$/, '')}_before`]
        : [`min_${n}`, `max_${n}`];
    return [
      { param: low, field, op: 'gte' },
      { param: high, field, op: 'lte' },
    ];
  });
}
