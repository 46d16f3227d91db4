import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { clusterRegistry, inWorker, workerId } from '../cluster';
import type { PoolStats } from '../db/connection';
import type { LimiterStats } from '../search';

export interface Metrics {
  registry: Registry;
  /** One finished (or abandoned) request; `operationId` is undefined for paths the spec lacks. */
  observe(operationId: string | undefined, status: number | 'aborted', seconds: number): void;
}

/**
 * A registry of its own per app, so that several apps in one process (tests) do not collide.
 * In a worker, /metrics serves the sum over all workers; the process's own figures (memory, CPU,
 * event loop) are each worker's, told apart by a `worker` label.
 */
export function createMetrics(pool: () => PoolStats, searches?: () => LimiterStats): Metrics {
  const registry = new Registry();
  const processRegistry = inWorker ? new Registry() : registry;
  if (inWorker) processRegistry.setDefaultLabels({ worker: String(workerId) });
  collectDefaultMetrics({ register: processRegistry });
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'Requests answered, by operationId ("none" for paths the spec lacks) and status.',
    labelNames: ['operation_id', 'status'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving a request to finishing its response, by operationId.',
    labelNames: ['operation_id'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  gauge('db_pool_connections_in_use', 'Database connections lent to a running request.', () => pool().inUse);
  gauge('db_pool_connections_idle', 'Open database connections waiting to be lent.', () => pool().idle);
  gauge('db_pool_acquires_waiting', 'Requests waiting for a database connection.', () => pool().waiting);
  gauge('db_pool_connections_max', 'The most database connections the pool opens.', () => pool().max);
  if (searches) {
    gauge('db_search_turns_running', "A search's statements that visit every match, running in their turn.", () => searches().running);
    gauge(
      'db_search_turns_waiting',
      'Searches waiting: to run such a statement (at most as many as the turns with their connection), or, without one, for a place (searches of any kind hold at most DB_POOL_SIZE - 1 connections).',
      () => searches().waiting,
    );
    gauge(
      'db_search_turns_max',
      'How many such statements run at once: DB_SEARCH_TURNS (at most DB_POOL_SIZE - 1), summed over workers.',
      () => searches().max,
    );
  }

  return {
    registry: inWorker ? clusterRegistry([registry, processRegistry]) : registry,
    observe(operationId, status, seconds) {
      const op = operationId ?? 'none';
      requests.inc({ operation_id: op, status: String(status) });
      latency.observe({ operation_id: op }, seconds);
    },
  };
}
