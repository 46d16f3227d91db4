import { withDeadline } from '../../src/db/connection';
import { insertRecord, listRecords, seekRecords } from '../../src/db/records';
import { parseSearch } from '../../src/db/search';
import { searchTurns, Turns } from '../../src/db/searchGate';
import { searchTuning } from '../../src/db/searchTuning';
import { dbTimestamp } from '../../src/db/time';
import { indexPending } from '../../src/db/wordIndex';
import { createTestDatabase, dialect, type TestDatabase } from '../helpers/db';
import { latch, sleep } from '../helpers/load';
import { NEWEST_FIRST as order } from '../helpers/scan';

describe('Turns', () => {
  test('runs at most its limit at once, the others in the order they came', async () => {
    const turns = new Turns(() => 2);
    const log: string[] = [];
    const gates = [latch(), latch(), latch(), latch()];
    const runs = gates.map((gate, i) =>
      turns.run(undefined, async () => {
        log.push(`start ${i}`);
        await gate.done;
        log.push(`end ${i}`);
        return i;
      }),
    );
    await sleep(10);
    expect(log).toEqual(['start 0', 'start 1']);
    gates[1].open();
    await sleep(10);
    expect(log).toEqual(['start 0', 'start 1', 'end 1', 'start 2']);
    gates[0].open();
    gates[2].open();
    gates[3].open();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3]);
    expect(log.filter((l) => l.startsWith('start'))).toEqual(['start 0', 'start 1', 'start 2', 'start 3']);
  });

  test('a turn not come by the deadline fails as a statement past its timeout, its work not run; the next still come', async () => {
    const turns = new Turns(() => 1);
    const first = latch();
    const running = turns.run(undefined, () => first.done);
    let ran = false;
    const started = Date.now();
    const late = turns.run(Date.now() + 100, () => {
      ran = true;
      return Promise.resolve();
    });
    await expect(late).rejects.toMatchObject({ name: 'KnexTimeoutError' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(95);
    const next = turns.run(undefined, () => Promise.resolve('next'));
    first.open();
    await running;
    expect(await next).toBe('next');
    expect(ran).toBe(false);
  });

  test('a limit under 1 is 1; a raised limit lets those waiting in, first come first', async () => {
    let limit = 0;
    const turns = new Turns(() => limit);
    const log: number[] = [];
    const gates = [latch(), latch(), latch()];
    const runs = gates.map((gate, i) =>
      turns.run(undefined, async () => {
        log.push(i);
        await gate.done;
      }),
    );
    await sleep(10);
    expect(log).toEqual([0]);
    limit = 4;
    const late = turns.run(undefined, () => Promise.resolve(log.push(3)));
    await sleep(10);
    expect(log).toEqual([0, 1, 2, 3]);
    gates.forEach((g) => g.open());
    await Promise.all([...runs, late]);
  });

  test('work that fails gives its turn back', async () => {
    const turns = new Turns(() => 1);
    await expect(turns.run(undefined, () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect(await turns.run(Date.now() + 50, () => Promise.resolve(1))).toBe(1);
  });
});

// On MySQL a search whose matches are not held counts them (and pages them) in its turn, within
// its deadline: with the one turn held elsewhere, it fails as a late statement does (503) at about
// its query timeout, never later, while a search whose matches are held and a list without a
// search are not held up. SQLite runs one statement at a time in each process anyway: its search
// does not wait.
describe('a search that visits all its matches takes its turn', () => {
  const spec = { table: 'posts', searchFields: ['title', 'content'] };
  const saved = { ...searchTuning };
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase({ size: 3, queryTimeoutMs: 300 });
    const at = dbTimestamp();
    for (let n = 0; n < 3; n++) {
      await insertRecord(t.db, 'posts', { title: `gated ${n}`, content: 'text', author: 'a', created_at: at, updated_at: at });
    }
    if (dialect === 'mysql') await indexPending(t.db, 'posts');
  });
  afterEach(() => Object.assign(searchTuning, saved));
  afterAll(() => t.drop());

  const list = (search: string) => listRecords(t.db, spec, { terms: parseSearch(search), filters: [], order, page: 1, pageSize: 10 });
  const seek = (search: string) => seekRecords(t.db, spec, { terms: parseSearch(search), filters: [], order, backward: false, limit: 11 });

  /** Runs `check` while another holds this process's one turn. */
  async function whileTaken(check: () => Promise<void>): Promise<void> {
    searchTuning.searchTurns = 1;
    const held = latch();
    const holder = searchTurns.run(undefined, () => held.done);
    try {
      await check();
    } finally {
      held.open();
      await holder;
    }
  }

  test('withDeadline tells its deadline', () => {
    const before = Date.now();
    expect(withDeadline(t.db).until).toBeGreaterThanOrEqual(before + 300);
  });

  test.each([
    ['a list page with its count', list],
    ['a cursor page', seek],
  ])('%s of matches not held waits for the turn, and fails at the deadline', async (_, search) => {
    searchTuning.maxHeld = 0;
    await whileTaken(async () => {
      const started = Date.now();
      const answer = search('gated');
      if (dialect === 'mysql') {
        await expect(answer).rejects.toMatchObject({ name: 'KnexTimeoutError' });
        expect(Date.now() - started).toBeGreaterThanOrEqual(250);
        expect(Date.now() - started).toBeLessThan(300 + 1500);
      } else {
        expect(await answer).toBeTruthy();
      }
      expect(await list('')).toMatchObject({ count: 3 });
    });
    expect(await list('gated')).toMatchObject({ count: 3 });
    expect(await seek('gated')).toHaveLength(3);
  });

  test("a page that InnoDB FULLTEXT reads takes a turn of its own, after its count's", async () => {
    Object.assign(searchTuning, { maxHeld: 0, walkRows: 0, walkPerMatch: 0 });
    const turns = jest.spyOn(searchTurns, 'run');
    try {
      expect(await list('gated')).toMatchObject({ count: 3 });
      expect(turns).toHaveBeenCalledTimes(dialect === 'mysql' ? 2 : 0);
    } finally {
      turns.mockRestore();
    }
  });

  test('a search whose matches are held does not wait', async () => {
    await whileTaken(async () => {
      expect(await list('gated')).toMatchObject({ count: 3 });
      expect(await seek('gated')).toHaveLength(3);
    });
  });
});
