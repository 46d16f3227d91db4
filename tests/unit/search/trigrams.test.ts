import { allOf, trigramsOf } from '../../../src/search/sqlite/trigrams';

// FTS5's trigram tokenizer counts characters (code points), not UTF-16 units: a term's
// trigrams must be the ones the index holds, or a rare-trigram lookup would find nothing.

test.each([
  ['ab', []],
  ['abc', ['abc']],
  ['abcd', ['abc', 'bcd']],
  ['aaaa', ['aaa']],
  ['𐐨𐐩𐐪x', ['𐐨𐐩𐐪', '𐐩𐐪x']],
  ['a b', ['a b']],
])('the trigrams of %j', (term, want) => {
  expect(trigramsOf(term)).toEqual(want);
});

test('an FTS5 query of phrases, double quotes doubled', () => {
  expect(allOf(['abc', 'x"y'])).toBe('"abc" AND "x""y"');
});
