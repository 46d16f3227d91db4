import { spread } from '../../../src/search/sqlite/trigrams';

describe('spread: the trigrams a look-up joins', () => {
  test.each([
    [[], 4, []],
    [['a'], 4, ['a']],
    [['a', 'b', 'c', 'd'], 4, ['a', 'b', 'c', 'd']],
    [['a', 'b', 'c', 'd', 'e'], 4, ['a', 'b', 'd', 'e']],
    [['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'], 4, ['a', 'c', 'f', 'h']],
  ])('%j, at most %i: %j', (xs, n, want) => {
    expect(spread(xs, n)).toEqual(want);
  });

  test('the first and the last, each taken once, for every length', () => {
    for (let length = 1; length <= 200; length++) {
      const xs = Array.from({ length }, (_, i) => i);
      const got = spread(xs, 4);
      expect(got).toHaveLength(Math.min(length, 4));
      expect(new Set(got).size).toBe(got.length);
      expect([got[0], got.at(-1)]).toEqual([0, length - 1]);
    }
  });
});
