import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './config';
import { within } from './lib/within';

export type { Logger };

/**
 * stdout, buffered: one write(2) per request line cost a fifth of a simple GET's time. Lines
 * reach stdout within a second, and flushLogs() writes what is left before the process exits.
 */
let stdout: ReturnType<typeof pino.destination> | undefined;
let flushing = 0;
/** How long flushLogs() waits for the write under way (the rest is written synchronously). */
export const FLUSH_MS = 2000;

/**
 * Writes every buffered line, in order, and resolves once they are out (or after FLUSH_MS).
 * Not flushSync() alone: while a write is under way, it writes the lines logged since ahead of
 * that write, and a process exiting next ends with its last line out of place.
 */
export function flushLogs(): Promise<void> {
  const out = stdout;
  if (!out) return Promise.resolve();
  flushing++;
  // flush()'s callback comes once the write under way is done; lines logged meanwhile may still
  // be buffered (below minLength), and with nothing under way flushSync() writes them in order.
  const written = new Promise<void>((resolve) => {
    try {
      out.flush(() => {
        try {
          out.flushSync();
        } catch {
          // stdout is gone (its reader closed): nothing more can be written
        }
        resolve();
      });
    } catch {
      resolve(); // destroyed: stdout is gone
    }
  });
  return within(written, FLUSH_MS, () => new Error('stdout took no more lines'))
    .catch(() => undefined)
    .finally(() => flushing--);
}

function bufferedStdout(): DestinationStream {
  if (!stdout) {
    stdout = pino.destination({ dest: 1, sync: false, minLength: 8192 });
    // Not while flushLogs() waits: a write started between its two steps would be overtaken.
    setInterval(() => flushing || stdout?.flush(), 1000).unref();
  }
  return stdout;
}

/**
 * JSON lines. Errors are reduced to type, code, message and stack: knex and mysql2 attach the
 * statement's bound values (request bodies) to their errors, and those never reach the log.
 */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: serializeError },
    },
    destination ?? bufferedStdout(),
  );
}

export const silentLogger: Logger = pino({ level: 'silent' });

// Duck-typed: errors from native drivers may come from another realm, where instanceof fails.
function serializeError(err: unknown): unknown {
  if (!err || typeof err !== 'object' || !('message' in err)) return err;
  const { name, code, message, stack } = err as Error & { code?: unknown };
  return { type: name, code, message, stack };
}
