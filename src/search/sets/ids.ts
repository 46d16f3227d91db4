/**
 * `id IN (...)` with the ids written out: they are integers, so need no binding, and a load's
 * batch or a search's matches hold more than a statement may bind.
 */
export function idsIn(ids: Iterable<number | string>): string {
  return `id IN (${Array.from(ids, (id) => String(Number(id))).join(',')})`;
}
