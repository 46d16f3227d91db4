import { parseSearch } from '../../../src/search/predicate';

// The contract's term syntax: white space and commas separate terms, a double-quoted phrase is
// one term, a quote left open runs to the end, and a search with no terms filters nothing.
const cases: [string, { given: string; want: string[] }][] = [
  ['empty', { given: '', want: [] }],
  ['only white space', { given: ' \t\r\n ', want: [] }],
  ['only commas and white space', { given: ' ,, , ', want: [] }],
  ['one term', { given: 'red', want: ['red'] }],
  ['terms separated by a space', { given: 'red shoes', want: ['red', 'shoes'] }],
  ['runs of tabs, newlines and spaces', { given: '\tred \n\n shoes\r\n', want: ['red', 'shoes'] }],
  ['terms separated by a comma', { given: 'red,shoes', want: ['red', 'shoes'] }],
  ['comma and space together', { given: 'red, shoes ,leather', want: ['red', 'shoes', 'leather'] }],
  ['leading and trailing commas', { given: ',,red,,', want: ['red'] }],
  ['non-ASCII white space separates', { given: 'red\u00a0shoes\u3000leather', want: ['red', 'shoes', 'leather'] }],
  ['a quoted phrase is one term', { given: '"red shoes"', want: ['red shoes'] }],
  ['a phrase and a bare term', { given: '"red shoes" leather', want: ['red shoes', 'leather'] }],
  ['a comma inside a phrase is kept', { given: '"red, shoes"', want: ['red, shoes'] }],
  ['white space at the edges of a phrase is kept', { given: '" red "', want: [' red '] }],
  ['two phrases', { given: '"red shoes","blue hat"', want: ['red shoes', 'blue hat'] }],
  ['an unclosed quote runs to the end', { given: '"red shoes', want: ['red shoes'] }],
  ['terms before an unclosed quote stay separate', { given: 'big  "red shoes, now', want: ['big', 'red shoes, now'] }],
  ['a quote also ends the term before it', { given: 'ab"cd ef"gh', want: ['ab', 'cd ef', 'gh'] }],
  ['an empty phrase is no term', { given: '"" red', want: ['red'] }],
  ['a phrase of only white space is no term', { given: '"  " red', want: ['red'] }],
  ['a lone quote is no term', { given: '"', want: [] }],
  ['a term given again is one term', { given: 'red red,red "red" shoes red', want: ['red', 'shoes'] }],
  // Matching is the database's job: the parser must hand these over untouched.
  ['wildcard characters are kept as they are', { given: '% _ \\ 50% a_b \\%', want: ['%', '_', '\\', '50%', 'a_b', '\\%'] }],
  ['case is kept', { given: 'ÉCOLE Жук', want: ['ÉCOLE', 'Жук'] }],
  ['emoji stay whole, modifiers included', { given: '🎉 👍🏽,👨‍👩‍👧', want: ['🎉', '👍🏽', '👨‍👩‍👧'] }],
];

test.each(cases)('%s', (_name, { given, want }) => {
  expect(parseSearch(given)).toEqual(want);
});
