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

function serializeError(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const { code } = err as { code?: unknown };
  return { type: err.name, code, message: err.message, stack: err.stack };
}
