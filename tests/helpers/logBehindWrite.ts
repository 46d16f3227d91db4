// An entry for tests/e2e/service/logger.test.ts: logs a line and starts writing it, as the logger's timer
// does; that write waits for libuv's one thread (UV_THREADPOOL_SIZE=1), kept busy as on a
// loaded machine. The last line is logged meanwhile, then the process flushes and exits as the
// service does at shutdown.
import { pbkdf2 } from 'node:crypto';
import pino from 'pino';
import { createLogger, flushLogs } from '../../src/logger';

pbkdf2('busy', 'salt', 100_000, 32, 'sha256', () => undefined);
const logger = createLogger('info');
logger.info('first');
(logger as unknown as Record<symbol, { flush(): void }>)[pino.symbols.streamSym].flush();
logger.info('last');
void flushLogs().then(() => process.exit(0));
