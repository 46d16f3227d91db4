// How the import and export commands report a failure: one line on stderr. A stack trace tells
// someone moving records nothing they can act on, and buries the line that does.

/** An unexpected error: its name and message, and its code when the message does not say it. */
export function oneLine(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  // A failed connection to several addresses (an AggregateError) may have no message, only a code.
  const text = flat(err.message ? `${err.name}: ${err.message}` : err.name);
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && !text.includes(code) ? `${text} (${code})` : text;
}

/** What went wrong, after a sentence that names the database: the message on one line, or oneLine when there is none. */
export function reason(err: unknown): string {
  const message = (err as Error | undefined)?.message;
  return message ? flat(message) : oneLine(err);
}

/** A multi-line message (a driver's, an AggregateError's) as one line of stderr. */
function flat(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}
