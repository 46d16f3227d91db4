// An entry for tests/e2e/service/workers.test.ts: the service's primary (superviseWorkers) over one
// worker whose channel to the primary stays open after it exits, held by a child of its own, so
// that the primary sees the worker's exit seconds before the channel closes. A loaded machine
// can deliver the two in that order for the service's own workers too.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inWorker, reportReady, superviseWorkers } from '../../src/cluster';
import { createLogger } from '../../src/logger';

if (inWorker) {
  // The channel is the worker's fd 3 (cluster's stdio: ignore, pipe, inherit, ipc).
  spawn('sleep', ['10'], { stdio: ['ignore', 'ignore', 'ignore', 3] }).unref();
  const server = createServer().listen(0, '127.0.0.1', () => reportReady((server.address() as AddressInfo).port));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
} else {
  // As the service's primary logs: straight to stdout, between the workers' relayed lines.
  const logger = createLogger('info', process.stdout);
  superviseWorkers({
    workers: 1,
    shutdownTimeoutMs: 10_000,
    logger,
    onListening: (port) => logger.info({ port }, 'listening'),
    failStart: (message) => {
      console.error(message);
      process.exit(1);
    },
  });
}
