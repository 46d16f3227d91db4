import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { collections } from '../../src/collections';
import { loadSpec } from '../../src/spec';
import { byName, generated } from '../helpers/fixtures';
import { deref } from '../helpers/fuzz/spec';

// The fixtures of a collection added later come from the seed's rows (generated()); the first
// five have readable hand-written ones. Both paths are checked for every collection, so that the
// derived one works before a new collection first needs it.
const spec = loadSpec();
const ajv = addFormats(new Ajv({ strict: false, allErrors: true }), { mode: 'full' });
const validator = (name: string) => ajv.compile(deref(spec.components!.schemas![name], spec));
const errors = (name: string, body: unknown) => {
  const validate = validator(name);
  return validate(body) ? [] : validate.errors;
};

describe.each(collections.map((c) => [c.name, c] as const))('%s', (name, c) => {
  const derived = generated(c);

  test.each([1, 2, 50])('derived create body %i is valid, with the required fields only', (n) => {
    const body = derived.valid(n);
    expect(errors(`${c.resource}Write`, body)).toEqual([]);
    expect(Object.keys(body).sort()).toEqual(
      [...((spec.components!.schemas![`${c.resource}Write`] as { required?: string[] }).required ?? [])].sort(),
    );
  });

  test('derived create bodies differ in their unique fields', () => {
    for (const field of c.uniqueFields) expect(derived.valid(1)[field]).not.toEqual(derived.valid(2)[field]);
  });

  test('the derived patch is valid and moves every optional field off its default', () => {
    expect(errors(`${c.resource}Patch`, derived.patch)).toEqual([]);
    for (const [field, value] of Object.entries(byName[name].defaults)) expect([field, derived.patch[field]]).not.toEqual([field, value]);
  });

  test('seed rows are valid create bodies with every field, in ASCII', () => {
    const rows = byName[name].rows(6);
    for (const row of rows) {
      expect(errors(`${c.resource}Write`, row)).toEqual([]);
      expect(JSON.stringify(row)).toMatch(/^[\t\n\r -~]*$/);
    }
    for (const field of c.uniqueFields) expect(new Set(rows.map((r) => r[field])).size).toBe(rows.length);
  });
});
