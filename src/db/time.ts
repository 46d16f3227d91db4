/** `2026-11-22 09:32:05.156` (UTC): the form both databases store and sort timestamps in. */
export function dbTimestamp(ms: number = Date.now()): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}
