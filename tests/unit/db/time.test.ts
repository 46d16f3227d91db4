import { apiTimestamp, dbTimestamp } from '../../../src/db/time';

// The stored form sorts as text in time order, and the API's form is RFC 3339 with milliseconds.
describe('timestamps', () => {
  test.each<[string, { ms: number; db: string; api: string }]>([
    ['epoch', { ms: 0, db: '1970-01-01 00:00:00.000', api: '1970-01-01T00:00:00.000Z' }],
    ['milliseconds kept', { ms: Date.UTC(2026, 10, 22, 9, 32, 5, 156), db: '2026-11-22 09:32:05.156', api: '2026-11-22T09:32:05.156Z' }],
    ['end of a year', { ms: Date.UTC(2025, 11, 31, 23, 59, 59, 999), db: '2025-12-31 23:59:59.999', api: '2025-12-31T23:59:59.999Z' }],
  ])('%s', (_name, { ms, db, api }) => {
    expect(dbTimestamp(ms)).toBe(db);
    expect(apiTimestamp(db)).toBe(api);
    expect(Date.parse(apiTimestamp(dbTimestamp(ms)))).toBe(ms);
  });

  test('the stored form sorts as text in time order', () => {
    const times = [0, 999, 1000, 59_999, 86_400_000, Date.UTC(2019, 0, 1), Date.UTC(2026, 10, 22, 9, 32, 5, 156)];
    const stored = times.map((t) => dbTimestamp(t));
    expect([...stored].sort()).toEqual(stored);
  });

  test('now by default', () => {
    const before = Date.now();
    const t = Date.parse(apiTimestamp(dbTimestamp()));
    expect(t).toBeGreaterThanOrEqual(before);
    expect(t).toBeLessThanOrEqual(Date.now());
  });
});
