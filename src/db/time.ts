// The one place that knows how timestamps look in the database and in the API.

/** `2026-11-22 09:32:05.156` (UTC): the form both databases store and sort timestamps in. */
export function dbTimestamp(ms: number = Date.now()): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

/** A stored timestamp (`2026-11-22 09:32:05.156`) as the API sends it: `2026-11-22T09:32:05.156Z`. */
export function apiTimestamp(stored: unknown): string {
  return `${String(stored).replace(' ', 'T')}Z`;
}
