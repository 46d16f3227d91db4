// Checks one record of an import (an NDJSON line, or a CSV record read as a body) against the
// spec's own write schema (the one that POST and PUT bodies are validated with), plus the
// timestamps an import may carry.
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { OpenAPIV3 } from 'openapi-types';
import type { Collection } from '../../src/collections';
import { writeFields } from '../../src/handlers/serialize';
import { fieldErrors, malformedStrings } from '../../src/http/validation';
import { toNfc } from '../../src/lib/text';
import type { FieldError } from '../../src/problems';

const TIMESTAMPS = ['created_at', 'updated_at'] as const;

export interface ImportRecord {
  /** The write fields as given, with defaults for those left out. */
  values: Record<string, unknown>;
  /** As sent, normalized to UTC milliseconds (`2026-11-22T09:32:05.156Z`), or undefined. */
  created_at?: string;
  updated_at?: string;
}

export type Checked = { ok: true; record: ImportRecord } | { ok: false; errors: FieldError[] };

export interface Checker {
  fields: string[];
  /** An NDJSON line. */
  check: (line: string) => Checked;
  /** A body already parsed (from a CSV record). */
  checkBody: (body: unknown) => Checked;
}

/** Builds the checker of one collection's records from the spec document. */
export function lineChecker(spec: OpenAPIV3.Document, c: Collection): Checker {
  const ajv = new Ajv({ allErrors: true, verbose: true, strict: false });
  addFormats(ajv, { mode: 'full' });
  ajv.addSchema(spec, 'spec');
  const write = ajv.getSchema(`spec#/components/schemas/${c.resource}Write`)!;
  const timestamp = ajv.getSchema('spec#/components/schemas/Timestamp')!;
  const fields = writeFields(spec, c.resource);

  const check = (line: string): Checked => {
    let body: unknown;
    try {
      body = JSON.parse(line);
    } catch (err) {
      return { ok: false, errors: [{ field: 'line', message: `is not JSON (${(err as Error).message})` }] };
    }
    return checkBody(body);
  };

  const checkBody = (sent: unknown): Checked => {
    const strings = malformedStrings(sent);
    if (strings.length) return { ok: false, errors: strings };
    // Stored in one Unicode form, as the service's writes are (src/lib/text.ts).
    const body = toNfc(sent);
    const given = (body && typeof body === 'object' && !Array.isArray(body) ? body : {}) as Record<string, unknown>;
    // The timestamps an import keeps are checked below, with a message that says what to write;
    // the write schema checks the rest (an id as a request body's: valid, then ignored).
    const isObject = body !== null && typeof body === 'object' && !Array.isArray(body);
    const rest = isObject
      ? Object.fromEntries(Object.entries(given).filter(([k]) => !(TIMESTAMPS as readonly string[]).includes(k)))
      : body;
    if (!write(rest))
      return { ok: false, errors: fieldErrors(write.errors!.map((e) => ({ ...e, instancePath: `/requestBody${e.instancePath}` }))) };
    const errors: FieldError[] = [];
    const times: Partial<Record<(typeof TIMESTAMPS)[number], string>> = {};
    for (const name of TIMESTAMPS) {
      const value = given[name];
      if (value === undefined) continue;
      // The Timestamp schema is a string: anything else fails it.
      if (typeof value !== 'string' || !timestamp(value) || Number.isNaN(Date.parse(value))) {
        errors.push({ field: name, message: 'must be an RFC 3339 date-time, e.g. 2026-11-22T09:32:05.156Z' });
        continue;
      }
      const utc = new Date(value).toISOString();
      // An offset can carry 9999-12-31 past the year 9999 in UTC (or 0000-01-01 before 0000), which
      // toISOString writes as `+010000-...`: no RFC 3339 date-time, and no date MySQL stores.
      if (/^\d{4}-/.test(utc)) times[name] = utc;
      else errors.push({ field: name, message: 'must fall in the years 0000 to 9999 once in UTC' });
    }
    if (times.created_at && times.updated_at && times.updated_at < times.created_at) {
      errors.push({ field: 'updated_at', message: 'must not be before created_at' });
    }
    if (errors.length) return { ok: false, errors };
    const values: Record<string, unknown> = {};
    for (const f of fields) values[f.name] = given[f.name] !== undefined ? given[f.name] : (f.default ?? null);
    return { ok: true, record: { values, ...times } };
  };
  return { fields: fields.map((f) => f.name), check, checkBody };
}
