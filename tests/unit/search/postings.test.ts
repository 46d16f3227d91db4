import fc from 'fast-check';
import {
  ARRAY_MAX,
  BITMAP_BYTES,
  BLOCK_SIZE,
  blockOf,
  change,
  type Container,
  decode,
  encode,
  IdSet,
  lowOf,
  type PostingsRow,
} from '../../../src/search/mysql/postings';

const sorted = (xs: Iterable<number>) => [...new Set(xs)].sort((a, b) => a - b);
/** Places in one block, biased to reach the array/bitmap edge. */
const lows = fc.oneof(
  fc.uniqueArray(fc.integer({ min: 0, max: BLOCK_SIZE - 1 }), { maxLength: 50 }),
  fc.uniqueArray(fc.integer({ min: 0, max: 2 * ARRAY_MAX }), { minLength: ARRAY_MAX - 3, maxLength: ARRAY_MAX + 3 }),
);

describe('a container', () => {
  test('decodes to the places it was made of, as an array below ARRAY_MAX, else a bitmap', () => {
    fc.assert(
      fc.property(lows, (xs) => {
        const c = encode(sorted(xs));
        expect(c.card).toBe(xs.length);
        expect(c.ids.length).toBe(xs.length < ARRAY_MAX ? 2 * xs.length : BITMAP_BYTES);
        expect([...decode(c)]).toEqual(sorted(xs));
      }),
      { numRuns: 60 },
    );
  });

  test('edges: empty, the first and last place, exactly ARRAY_MAX', () => {
    expect(encode([])).toEqual({ card: 0, ids: Buffer.alloc(0) });
    expect([...decode(encode([0, BLOCK_SIZE - 1]))]).toEqual([0, BLOCK_SIZE - 1]);
    const full = Array.from({ length: ARRAY_MAX }, (_, i) => i * 16);
    expect(encode(full).ids.length).toBe(BITMAP_BYTES);
    expect([...decode(encode(full))]).toEqual(full);
    expect(encode([1, 258]).ids).toEqual(Buffer.from([1, 0, 2, 1]));
  });

  test('change adds and removes as a Set does, and is undefined once empty', () => {
    fc.assert(
      fc.property(lows, lows, lows, (start, add, remove) => {
        const model = new Set(start);
        for (const x of remove) model.delete(x);
        for (const x of add) model.add(x);
        const before: Container | undefined = start.length ? encode(sorted(start)) : undefined;
        const after = change(before, sorted(add), sorted(remove));
        if (!model.size) expect(after).toBeUndefined();
        else {
          expect(after!.card).toBe(model.size);
          expect([...decode(after!)]).toEqual(sorted(model));
          // The same bytes as a container made afresh: one encoding per set of places.
          expect(after!.ids.equals(encode(sorted(model)).ids)).toBe(true);
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe('IdSet', () => {
  const ids = fc.uniqueArray(fc.integer({ min: 1, max: 5 * BLOCK_SIZE }), { maxLength: 300 });
  const rows = (xs: number[]): PostingsRow[] => {
    const byBlock = new Map<number, number[]>();
    for (const id of xs) byBlock.set(blockOf(id), [...(byBlock.get(blockOf(id)) ?? []), lowOf(id)]);
    return [...byBlock].map(([block, ls]) => ({ block, ...encode(sorted(ls)) }));
  };

  test('OR of rows, AND across sets, add and delete agree with a Set', () => {
    fc.assert(
      fc.property(ids, ids, ids, ids, (a1, a2, b, edits) => {
        // A term of two words (a1, a2), another of one (b).
        const set = IdSet.of([...rows(a1), ...rows(a2)]).and(IdSet.of(rows(b)));
        const bs = new Set(b);
        const model = new Set([...a1, ...a2].filter((x) => bs.has(x)));
        edits.forEach((x, i) => {
          if (i % 2) {
            set.add(x);
            model.add(x);
          } else {
            set.delete(x);
            model.delete(x);
          }
        });
        expect(set.size).toBe(model.size);
        expect(set.ids()).toEqual(sorted(model));
        for (const x of [...a1, ...b, ...edits]) expect(set.has(x)).toBe(model.has(x));
        expect(set.ids(model.size)).toEqual(sorted(model));
        if (model.size) expect(set.ids(model.size - 1)).toBeUndefined();
      }),
      { numRuns: 100 },
    );
  });

  test('ids past the first block and a full block', () => {
    const full = Array.from({ length: BLOCK_SIZE }, (_, i) => i);
    const set = IdSet.of([{ block: 3, ...encode(full) }]);
    expect(set.size).toBe(BLOCK_SIZE);
    expect(set.has(3 * BLOCK_SIZE)).toBe(true);
    expect(set.has(4 * BLOCK_SIZE)).toBe(false);
    expect(set.ids(2)).toBeUndefined();
  });
});
