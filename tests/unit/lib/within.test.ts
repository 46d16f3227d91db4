import { within } from '../../../src/lib/within';

const theirs = new Error('the work failed');
const made = new Error('timed out');

beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate'] }));
afterEach(() => jest.useRealTimers());

// Each row: the work settles (fails or not) at `settles` ms, or never; raced against 100 ms.
test.each([
  { name: 'resolves in time: its value', settles: 50, fails: false, answer: { value: 'done' }, at: 50 },
  { name: 'rejects in time: its error', settles: 50, fails: true, answer: { error: theirs }, at: 50 },
  { name: 'resolves too late: the made error', settles: 150, fails: false, answer: { error: made }, at: 100 },
  { name: 'rejects too late: the made error, its failure dropped', settles: 150, fails: true, answer: { error: made }, at: 100 },
  { name: 'never settles: the made error', settles: undefined, fails: false, answer: { error: made }, at: 100 },
])('$name', async ({ settles, fails, answer, at }) => {
  const unhandled = jest.fn();
  process.on('unhandledRejection', unhandled);
  try {
    const work = new Promise<string>((resolve, reject) => {
      if (settles !== undefined) setTimeout(() => (fails ? reject(theirs) : resolve('done')), settles);
    });
    const timedOut = jest.fn(() => made);
    let answered: { value?: string; error?: unknown } | undefined;
    void within(work, 100, timedOut).then(
      (value) => (answered = { value }),
      (error: unknown) => (answered = { error }),
    );
    await jest.advanceTimersByTimeAsync(at - 1);
    expect(answered).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);
    expect(answered).toEqual(answer);
    expect(answered?.error).toBe(answer.error);
    expect(timedOut).toHaveBeenCalledTimes(answer.error === made ? 1 : 0);
    // The race's timer is gone once it has an answer: what is left is the work's own, if it is still to settle.
    expect(jest.getTimerCount()).toBe(settles !== undefined && settles > at ? 1 : 0);
    await jest.runAllTimersAsync();
    await new Promise(setImmediate);
    expect(unhandled).not.toHaveBeenCalled();
  } finally {
    process.off('unhandledRejection', unhandled);
  }
});
