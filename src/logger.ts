import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './config';

export type { Logger };

/**
 * JSON lines on stdout, written synchronously so that the last lines before an exit are not lost.
 * Errors are reduced to type, code, message and stack: knex and mysql2 attach the statement's
 * bound values (request bodies) to their errors, and those never reach the log.
 */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: serializeError },
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

export const silentLogger: Logger = pino({ level: 'silent' });

// Duck-typed: errors from native drivers may come from another realm, where instanceof fails.
function serializeError(err: unknown): unknown {
  if (!err || typeof err !== 'object' || !('message' in err)) return err;
  const { name, code, message, stack } = err as Error & { code?: unknown };
  return { type: name, code, message, stack };
}
