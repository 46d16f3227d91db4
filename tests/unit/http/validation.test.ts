// Problem entries name a field as a client writes it. A body key that looks like a number is a
// property name, never an array index: `{"9": 1}` is field `9`, an array body's third item `[2]`.
import type { ErrorObject } from 'ajv';
import { fieldErrors, malformedStrings } from '../../../src/http/validation';

const ajvError = (instancePath: string, keyword: string, params: Record<string, unknown>): ErrorObject =>
  ({ instancePath, keyword, params, schemaPath: '#', message: 'is invalid' }) as ErrorObject;

describe('fieldErrors', () => {
  it.each([
    ['/requestBody', 'additionalProperties', { additionalProperty: '9' }, '9'],
    ['/requestBody', 'additionalProperties', { additionalProperty: 'colour' }, 'colour'],
    ['/requestBody/2', 'additionalProperties', { additionalProperty: '0' }, '[2].0'],
    ['/requestBody/2', 'required', { missingProperty: 'title' }, '[2].title'],
    ['/requestBody', 'required', { missingProperty: '12' }, '12'],
    ['/requestBody/ids/3', 'type', { type: 'integer' }, 'ids[3]'],
  ])('%s %s %j names %s', (path, keyword, params, field) => {
    expect(fieldErrors([ajvError(path, keyword, params)])[0].field).toBe(field);
  });
});

describe('malformedStrings', () => {
  it('names keys that look like numbers as keys, and array items by index', () => {
    expect(malformedStrings({ '9': 'a\u0000b' }).map((e) => e.field)).toEqual(['9']);
    expect(malformedStrings([{ title: 'ok' }, { title: '\ud800' }]).map((e) => e.field)).toEqual(['[1].title']);
    expect(malformedStrings({ tags: ['x', { '0': '\u0000' }] }).map((e) => e.field)).toEqual(['tags[1].0']);
  });

  it('names the top field of a body nested too deep', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 40; i++) deep = { a: deep };
    expect(malformedStrings({ body: deep })).toEqual([{ field: 'body', message: 'is nested more than 32 levels deep' }]);
    expect(malformedStrings({ '7': deep })[0].field).toBe('7');
  });
});
