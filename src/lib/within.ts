/**
 * `work`'s outcome if it settles within `ms`; otherwise rejects, at `ms`, with what `timedOut`
 * returns (called then, so it may also note that the work was abandoned). The timer stops when
 * the work settles: it does not hold the process open after. Abandoned work may still fail
 * later, and nobody is left to handle that: its rejection is dropped rather than reported as
 * unhandled.
 */
export function within<T>(work: Promise<T>, ms: number, timedOut: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(timedOut()), ms);
    void work.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}
