import { listRecords, seekRecords } from '../../../src/handlers/pages';
import { poolStats, withDeadline } from '../../../src/db/connection';
import { insertRecord } from '../../../src/db/records';
import { ConcurrencyLimiter } from '../../../src/lib/concurrency';
import { type Costly, createSearch, defaultTuning, parseSearch, SearchLimiter, type SearchTuning } from '../../../src/search';
import type { Filter } from '../../../src/db/filters';
import { dbTimestamp } from '../../../src/db/time';
import { indexPending } from '../../../src/search/sets/indexer';
import { createTestDatabase, dialect, type TestDatabase } from '../../helpers/db';
import { latch, sleep } from '../../helpers/load';
import { NEWEST_FIRST as order } from '../../helpers/scan';

describe('ConcurrencyLimiter', () => {
  test('runs at most its limit at once, the others in the order they came', async () => {
    const turns = new ConcurrencyLimiter(() => 2);
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
    const turns = new ConcurrencyLimiter(() => 1);
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
    const turns = new ConcurrencyLimiter(() => limit);
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
    const turns = new ConcurrencyLimiter(() => 1);
    await expect(turns.run(undefined, () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect(await turns.run(Date.now() + 50, () => Promise.resolve(1))).toBe(1);
  });

  test("a turn freed after a waiter's deadline, before its timer ran, is not given to it", async () => {
    const turns = new ConcurrencyLimiter(() => 1);
    const gate = latch();
    const holder = turns.run(undefined, async () => {
      await gate.done;
      for (const end = Date.now() + 60; Date.now() < end;); // holds the event loop past the waiter's deadline
    });
    let ran = false;
    const waiter = turns.run(Date.now() + 30, () => Promise.resolve((ran = true)));
    gate.open();
    await holder;
    await expect(waiter).rejects.toMatchObject({ name: 'KnexTimeoutError' });
    expect(ran).toBe(false);
    expect(turns.stats()).toEqual({ running: 0, waiting: 0, max: 1 });
  });

  test('a free turn past the deadline is not come by it: the work is not run', async () => {
    const turns = new ConcurrencyLimiter(() => 1);
    let ran = false;
    await expect(turns.run(Date.now() - 1, () => Promise.resolve((ran = true)))).rejects.toMatchObject({ name: 'KnexTimeoutError' });
    expect(ran).toBe(false);
    expect(turns.stats()).toEqual({ running: 0, waiting: 0, max: 1 });
  });
});

describe('SearchLimiter', () => {
  /** A search of two costly statements, logging as `name` what it does; `between` runs between them. */
  const twoStatements =
    (log: string[], name: string, between: () => Promise<unknown> = () => Promise.resolve()) =>
    async (costly: Costly) => {
      log.push(`${name} attempt`);
      await costly(() => Promise.resolve(log.push(`${name} count`)));
      await between();
      await costly(() => Promise.resolve(log.push(`${name} page`)));
      return name;
    };

  test("each costly statement takes its turn: two searches' statements alternate", async () => {
    const turns = new SearchLimiter(() => 1);
    const log: string[] = [];
    const middle = latch();
    const first = turns.search(
      undefined,
      twoStatements(log, 'a', () => middle.done),
    );
    await sleep(10);
    expect(turns.stats()).toEqual({ running: 0, waiting: 0, max: 1 });
    const second = turns.search(undefined, twoStatements(log, 'b'));
    await sleep(10);
    middle.open();
    expect(await Promise.all([first, second])).toEqual(['a', 'b']);
    expect(log).toEqual(['a attempt', 'a count', 'b attempt', 'b count', 'b page', 'a page']);
  });

  test('as many searches as turns wait ready; the rest end their attempt, wait for a place, and are attempted again', async () => {
    const turns = new SearchLimiter(() => 1);
    const held = latch();
    const holder = turns.run(undefined, () => held.done);
    const log: string[] = [];
    const searches = ['a', 'b', 'c'].map((name) => turns.search(undefined, twoStatements(log, name)));
    await sleep(10);
    // a: running once the turn is free; b: ready; c: its attempt ended, waiting for a place.
    expect(log).toEqual(['a attempt', 'b attempt', 'c attempt']);
    expect(turns.stats()).toEqual({ running: 1, waiting: 3, max: 1 });
    held.open();
    await holder;
    expect(await Promise.all(searches)).toEqual(['a', 'b', 'c']);
    expect(log.filter((l) => l.endsWith('count'))).toEqual(['a count', 'b count', 'c count']);
    expect(log.filter((l) => l.startsWith('c'))).toEqual(['c attempt', 'c attempt', 'c count', 'c page']);
    expect(turns.stats()).toEqual({ running: 0, waiting: 0, max: 1 });
  });

  /** Takes the one turn and places two searches, ready for it; `release` gives the turn back and waits for them. */
  function twoReady(turns: SearchLimiter): { log: string[]; release(): Promise<unknown> } {
    const held = latch();
    const holder = turns.run(undefined, () => held.done);
    const log: string[] = [];
    const ready = ['a', 'b'].map((name) => turns.search(undefined, twoStatements(log, name)));
    return {
      log,
      release: () => {
        held.open();
        return Promise.all([holder, ...ready]);
      },
    };
  }

  /**
   * Whether, with the turn taken, one search more than `places` finds no place: each is
   * attempted, and the last again once placed.
   */
  async function placesFree(turns: SearchLimiter, places: number): Promise<void> {
    const held = latch();
    const holder = turns.run(undefined, () => held.done);
    const log: string[] = [];
    const names = ['a', 'b', 'c'].slice(0, places + 1);
    const searches = Promise.all(names.map((name) => turns.search(undefined, twoStatements(log, name))));
    await sleep(10);
    expect(log).toEqual(names.map((name) => `${name} attempt`));
    held.open();
    await holder;
    expect(await searches).toEqual(names);
    expect(log.filter((l) => l.endsWith('attempt'))).toEqual([...names, names[places]].map((name) => `${name} attempt`));
  }
  const twoPlacesFree = (turns: SearchLimiter) => placesFree(turns, 2);

  test('a search attempted again is given up at the deadline, whatever it waits for, and gives its place back', async () => {
    const turns = new SearchLimiter(() => 1);
    const ready = twoReady(turns);
    const stuck = latch(); // the second attempt waits, as for a connection, past the deadline
    let attempts = 0;
    let ran = false;
    const started = Date.now();
    const late = turns.search(Date.now() + 1000, async (costly) => {
      if (++attempts === 2) await stuck.done;
      return costly(() => Promise.resolve((ran = true)));
    });
    await sleep(10);
    await ready.release();
    await expect(late).rejects.toMatchObject({ name: 'KnexTimeoutError' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(995);
    expect(attempts).toBe(2);
    await twoPlacesFree(turns);
    // What the abandoned attempt runs after its deadline takes no turn.
    stuck.open();
    await sleep(10);
    expect(ran).toBe(false);
    expect(turns.stats()).toEqual({ running: 0, waiting: 0, max: 1 });
  });

  test('a placed search whose attempt stalls past the deadline (a snapshot tried again, waiting for a connection) is given up, its place given back', async () => {
    const turns = new SearchLimiter(() => 1);
    const stuck = latch();
    let ran = 0;
    const started = Date.now();
    const stalled = turns.search(Date.now() + 200, async (costly) => {
      await costly(() => Promise.resolve(ran++));
      await stuck.done;
      return costly(() => Promise.resolve(ran++));
    });
    await expect(stalled).rejects.toMatchObject({ name: 'KnexTimeoutError' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(195);
    await twoPlacesFree(turns);
    stuck.open();
    await sleep(10);
    expect(ran).toBe(1);
    expect(turns.stats()).toEqual({ running: 0, waiting: 0, max: 1 });
  });

  test("what an abandoned attempt runs once its deadline's timer has run takes no place or turn, even while the clock reads a moment before the deadline", async () => {
    const turns = new SearchLimiter(() => 1);
    const stuck = latch();
    let ran = false;
    const until = Date.now() + 100;
    const search = turns.search(until, async (costly) => {
      await stuck.done;
      return costly(() => Promise.resolve((ran = true)));
    });
    await expect(search).rejects.toMatchObject({ name: 'KnexTimeoutError' });
    // A timer may run a little before the clock reads its time: the turn's own deadline check
    // would then let the attempt in.
    const clock = jest.spyOn(Date, 'now').mockReturnValue(until - 1);
    try {
      stuck.open();
      await sleep(10);
    } finally {
      clock.mockRestore();
    }
    expect(ran).toBe(false);
    await twoPlacesFree(turns);
  });

  test('a search not placed by its deadline fails as a late statement, attempted once', async () => {
    const turns = new SearchLimiter(() => 1);
    const ready = twoReady(turns);
    await expect(turns.search(Date.now() + 50, twoStatements(ready.log, 'c'))).rejects.toMatchObject({ name: 'KnexTimeoutError' });
    expect(ready.log).toEqual(['a attempt', 'b attempt', 'c attempt']);
    await ready.release();
  });

  test("a search that fails gives its place and turn back, and its error is the caller's", async () => {
    const turns = new SearchLimiter(() => 1);
    const failing = turns.search(undefined, async (costly) => {
      await costly(() => Promise.resolve());
      throw new Error('no');
    });
    await expect(failing).rejects.toThrow('no');
    expect(turns.stats()).toEqual({ running: 0, waiting: 0, max: 1 });
    await twoPlacesFree(turns);
  });

  test.each([
    ['2 connections', 2],
    ['1 connection', 1],
  ])('with a pool of %s, one turn and one search at a time: the next waits without its connection, attempted once', async (_, pool) => {
    const turns = new SearchLimiter(
      () => 3,
      () => pool,
    );
    expect(turns.stats().max).toBe(1);
    const held = latch();
    const holder = turns.run(undefined, () => held.done);
    const log: string[] = [];
    const searches = Promise.all(['a', 'b'].map((name) => turns.search(undefined, twoStatements(log, name))));
    await sleep(10);
    expect(log).toEqual(['a attempt']);
    expect(turns.stats()).toEqual({ running: 1, waiting: 2, max: 1 });
    held.open();
    await holder;
    expect(await searches).toEqual(['a', 'b']);
    expect(log).toEqual(['a attempt', 'a count', 'a page', 'b attempt', 'b count', 'b page']);
  });

  test('searches of any kind hold at most one connection fewer than the pool: the rest wait without one, in order, until their deadline', async () => {
    const turns = new SearchLimiter(
      () => 1,
      () => 3,
    );
    const log: string[] = [];
    const gates = [latch(), latch(), latch()];
    // Searches with no costly statement (little to check or sort) take no turn, but a connection.
    const cheap = (name: string, gate: { done: Promise<void> }) => async () => {
      log.push(`${name} attempt`);
      await gate.done;
      return name;
    };
    const searches = gates.map((gate, i) => turns.search(undefined, cheap(String(i), gate)));
    const late = turns.search(Date.now() + 50, cheap('late', latch()));
    await sleep(10);
    expect(log).toEqual(['0 attempt', '1 attempt']);
    expect(turns.stats()).toEqual({ running: 0, waiting: 2, max: 1 });
    await expect(late).rejects.toMatchObject({ name: 'KnexTimeoutError' });
    gates[1].open();
    await sleep(10);
    expect(log).toEqual(['0 attempt', '1 attempt', '2 attempt']);
    gates[0].open();
    gates[2].open();
    expect(await Promise.all(searches)).toEqual(['0', '1', '2']);
    expect(turns.stats()).toEqual({ running: 0, waiting: 0, max: 1 });
  });

  test('a search with no costly statement takes no turn', async () => {
    const turns = new SearchLimiter(() => 1);
    const held = latch();
    const holder = turns.run(undefined, () => held.done);
    expect(await turns.search(Date.now() + 50, () => Promise.resolve('cheap'))).toBe('cheap');
    held.open();
    await holder;
  });
});

// A search whose statements check or sort many rows (more than checkedInline), read a filter's
// ids whole (more matches than inList), or walk far, runs them in its turn, within its deadline:
// with the one turn held elsewhere, it fails as a late statement does (503) at about its query
// timeout, never later, while a search with little to check and a list without a search are not
// held up. Both databases: SQLite's searches read on a thread of their own.
describe('a search that checks or sorts many rows takes its turn', () => {
  const spec = { table: 'posts', searchFields: ['title', 'content'] };
  /** What the searches below run with; tests move it, and it is put back after each. */
  const tuning: SearchTuning = { ...defaultTuning };
  const searchLimiter = new SearchLimiter(
    () => tuning.searchTurns,
    () => tuning.poolSize,
  );
  /** An engine with the tuning as it is now, sharing the one limiter as a process's requests do. */
  const engine = () => createSearch(tuning, { limiter: searchLimiter });
  /** Every check of a row and every sort of ids is costly: what many matches would cost. */
  const costlyEverything = { checkedInline: 0, walkPerMatch: 0 };
  let t: TestDatabase;
  /** A pool of 3 connections, whose searches have `queryTimeoutMs`, on 3 records, indexed. */
  async function gatedPosts(queryTimeoutMs: number): Promise<TestDatabase> {
    const made = await createTestDatabase({ size: 3, queryTimeoutMs });
    const at = dbTimestamp();
    for (let n = 0; n < 3; n++) {
      await insertRecord(made.db, 'posts', { title: `gated ${n}`, content: 'text', author: 'a', created_at: at, updated_at: at });
    }
    await indexPending(made.db, 'posts', spec.searchFields);
    return made;
  }
  beforeAll(async () => (t = await gatedPosts(300)));
  afterEach(() => Object.assign(tuning, defaultTuning));
  afterAll(() => t.drop());

  const list = (search: string, on = t, filters: Filter[] = []) =>
    listRecords(on.db, spec, { terms: parseSearch(search), filters, order, page: 1, pageSize: 10 }, engine());
  const seek = (search: string, on = t, filters: Filter[] = []) =>
    seekRecords(on.db, spec, { terms: parseSearch(search), filters, order, backward: false, limit: 11 }, engine());

  /** Runs `check` while another holds this process's one turn. */
  async function whileTaken(check: () => Promise<void>): Promise<void> {
    tuning.searchTurns = 1;
    const held = latch();
    const holder = searchLimiter.run(undefined, () => held.done);
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
  ])('%s that sorts more ids than checkedInline waits for the turn, and fails at the deadline', async (_, search) => {
    Object.assign(tuning, costlyEverything);
    await whileTaken(async () => {
      const started = Date.now();
      await expect(search('gated')).rejects.toMatchObject({ name: 'KnexTimeoutError' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
      expect(Date.now() - started).toBeLessThan(300 + 1500);
      expect(await list('')).toMatchObject({ count: 3 });
    });
    expect(await list('gated')).toMatchObject({ count: 3 });
    expect(await seek('gated')).toHaveLength(3);
  });

  test.each([
    ['one turn', 1, 1],
    ['more turns than the pool allows (capped one below it)', 5, 2],
  ])(
    '%s: list and cursor pages waiting for a turn: two hold their connection, ready, the rest none; all answer in their turn',
    async (_, asked, turns) => {
      Object.assign(tuning, { ...costlyEverything, searchTurns: asked, poolSize: 3 });
      expect(searchLimiter.stats().max).toBe(turns);
      // A deadline the searches meet once the turns are free, however slow the machine.
      const roomy = await gatedPosts(10_000);
      const held = latch();
      const holder = Promise.all(Array.from({ length: turns }, () => searchLimiter.run(undefined, () => held.done)));
      // Twice as many searches as the pool has connections (3), each waiting for a turn.
      const searches = [list, list, seek, list, seek, list].map((search) => search('gated', roomy));
      const waiting = Promise.allSettled(searches);
      try {
        // MySQL: each first plans (a connection each, 2 at a time); two keep theirs, waiting for a
        // turn, the rest give theirs back. SQLite: the reader's one connection is the first's; the
        // second waits for it in the pool, not the limiter.
        const queued = dialect === 'mysql' ? 6 : 5;
        const settled = () => searchLimiter.stats().waiting === queued;
        for (const givingUp = Date.now() + 5_000; !settled() && Date.now() < givingUp;) await sleep(5);
        expect(searchLimiter.stats()).toMatchObject({ running: turns, waiting: queued });
        // MySQL: the pool's own connections; SQLite's searches hold the reader's, not the pool's.
        if (dialect === 'mysql') expect(poolStats(roomy.db)).toMatchObject({ inUse: 2, waiting: 0 });
        expect(await list('', roomy)).toMatchObject({ count: 3 });
      } finally {
        held.open();
        await holder;
        const answers = await waiting;
        await roomy.drop();
        expect(answers.map((a) => (a.status === 'fulfilled' ? ('count' in a.value ? a.value.count : a.value.length) : a.reason))).toEqual([
          3, 3, 3, 3, 3, 3,
        ]);
      }
    },
  );

  // Which of a search's statements are costly, as the tuning draws the lines.
  test.each<[string, Partial<SearchTuning>, string, Filter[], boolean, number]>([
    ['the defaults: nothing', {}, 'gated', [], false, 0],
    ['a word decided by the sets, walked: nothing', { checkedInline: 0 }, 'gated', [], false, 0],
    ['the sort of the ids', costlyEverything, 'gated', [], false, 1],
    ['the check of a candidate, then the sort', costlyEverything, '"gated 1"', [], false, 2],
    ['the check of a pending record, then the sort', costlyEverything, 'gated', [], true, 2],
    ['the filter read whole', { inList: 0 }, 'gated', [{ column: 'author', op: 'eq', value: 'a' }], false, 1],
    ['the filter checked by id: nothing', {}, 'gated', [{ column: 'author', op: 'eq', value: 'a' }], false, 0],
    ['by id, the check of a pending record only', { checkedInline: 0, walkPerMatch: 0, inList: 0 }, 'text', [], true, 1],
  ])('costly statements: %s', async (_what, tuned, search, filters, pending, expected) => {
    Object.assign(tuning, tuned);
    let added: number | undefined;
    if (pending) {
      const at = dbTimestamp();
      added = Number(
        (await insertRecord(t.db, 'posts', { title: 'gated 9', content: 'text', author: 'a', created_at: at, updated_at: at })).id,
      );
    }
    let costlyStatements = 0;
    const counting: Costly = (work) => {
      costlyStatements++;
      return work();
    };
    const spy = jest.spyOn(searchLimiter, 'search').mockImplementation((_, attempt) => attempt(counting));
    try {
      const byId = search === 'text' ? [{ column: 'id', desc: true }] : order;
      const result = await listRecords(t.db, spec, { terms: parseSearch(search), filters, order: byId, page: 1, pageSize: 10 }, engine());
      const want = search === '"gated 1"' ? 1 : pending ? 4 : 3;
      expect(result).toMatchObject({ count: want });
      expect(costlyStatements).toBe(expected);
    } finally {
      spy.mockRestore();
      if (added !== undefined) await t.db('posts').where({ id: added }).delete();
      await indexPending(t.db, 'posts', spec.searchFields);
    }
  });

  test('a search with little to check or sort does not wait', async () => {
    await whileTaken(async () => {
      expect(await list('gated')).toMatchObject({ count: 3 });
      expect(await seek('gated')).toHaveLength(3);
      expect(await list('gated', t, [{ column: 'author', op: 'eq', value: 'a' }])).toMatchObject({ count: 3 });
    });
  });
});
