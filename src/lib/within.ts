/**
 * `work`'s outcome if it settles within `ms`; else rejects at `ms` with `timedOut()`. The timer
 * does not hold the process open, and a rejection of abandoned work is dropped, not unhandled.
 */
export function within<T>(work: Promise<T>, ms: number, timedOut: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(timedOut()), ms);
    void work.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}
