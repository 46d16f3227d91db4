import { duplicateKey } from '../../../src/http/jsonKeys';

// The bytes of a JSON text that has parsed: which key, if any, an object has twice.
const cases: [string, { given: string; want: string | undefined }][] = [
  ['no key twice', { given: '{"title":"a","author":"b"}', want: undefined }],
  ['a key twice', { given: '{"title":"x","author":"a","title":"t2"}', want: 'title' }],
  ['a key twice, one spelled with an escape', { given: '{"title":"x","titl\\u0065":"t2"}', want: 'title' }],
  ['a key twice, with white space before the colon', { given: '{ "a" : 1 ,\n "a"\t: 2 }', want: 'a' }],
  ['the same key in two objects', { given: '{"a":{"b":1},"c":{"b":2},"d":[{"b":1},{"b":2}]}', want: undefined }],
  ['a key twice in a nested object', { given: '{"a":{"b":1,"b":2}}', want: 'a.b' }],
  ['a key twice in an object in an array', { given: '{"a":[1,{"b":1,"b":2}]}', want: 'a.b' }],
  ['a value that looks like keys', { given: '{"a":"\\"a\\":{\\"a\\":","b":"a:"}', want: undefined }],
  ['a value equal to a key', { given: '{"a":"a","b":"a"}', want: undefined }],
  ['keys past ASCII', { given: '{"café":1,"cafe":2,"ça":3,"café":4}', want: 'café' }],
  ['a key after a nested object closes', { given: '{"a":{"x":{"y":1}},"b":2,"a":3}', want: 'a' }],
  ['values that end in escaped quotes and backslashes', { given: '{"a":"x\\"","b":"y\\\\","a":1}', want: 'a' }],
  ['a long value with escaped quotes', { given: `{"a":"${'x'.repeat(100)}\\"${'y'.repeat(100)}\\"","b":1,"a":2}`, want: 'a' }],
  ['an array of strings', { given: '["a","a"]', want: undefined }],
];
test.each(cases)('%s', (_n, { given, want }) => {
  expect(duplicateKey(Buffer.from(given))).toBe(want);
});

test('deep nesting takes no recursion and finds nothing', () => {
  expect(duplicateKey(Buffer.from(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`))).toBeUndefined();
});
