import { existsSync } from 'node:fs';
import type { Registry } from 'prom-client';
import type { ServiceOperationId } from '../collections';
import { type Db, ping } from '../db/connection';
import type { components } from '../generated/openapi';
import { HttpProblem, type ProblemKind } from '../problems';
import { problemPage } from '../problems/page';
import { DOCS_PATH } from '../spec';
import type { Handler } from './records';

type Health = components['schemas']['Health'];
type Readiness = components['schemas']['Readiness'];

export interface ServiceDeps {
  db: Db;
  /** The contract's text as written, and as JSON: the document the app routes with. */
  specText: string;
  specJson: string;
  metrics: Registry;
}

const READY_TIMEOUT_MS = 1000;

export function serviceHandlers(deps: ServiceDeps): Record<ServiceOperationId, Handler> {
  const get = {
    getOpenApiJson(_c, _req, res) {
      res.type('application/json').send(deps.specJson);
    },
    getOpenApiYaml(_c, _req, res) {
      res.type('application/yaml; charset=utf-8').send(deps.specText);
    },
    getDocs(_c, _req, res) {
      if (!existsSync(DOCS_PATH)) throw new HttpProblem('not-found', 'The API reference is not built: run `npm run docs`');
      res.sendFile(DOCS_PATH);
    },
    getProblemType(c, _req, res) {
      // The spec's enum (ProblemKind) has let only a kind through.
      const { kind } = c.request.params as { kind: ProblemKind };
      res.type('text/html; charset=utf-8').send(problemPage(kind));
    },
    getHealth(_c, _req, res) {
      res.json({ status: 'ok' } satisfies Health);
    },
    async getMetrics(_c, _req, res) {
      res.type(deps.metrics.contentType).send(await deps.metrics.metrics());
    },
    async getReadiness(_c, _req, res) {
      // The timeout error is classified as "unavailable" by the app's error handler: a 503.
      await ping(deps.db, READY_TIMEOUT_MS);
      res.json({ status: 'ready' } satisfies Readiness);
    },
  } satisfies Record<Extract<ServiceOperationId, `get${string}`>, Handler>;
  // HEAD runs the GET handler; node sends its headers without the body.
  const head = Object.fromEntries(Object.entries(get).map(([id, handler]) => [id.replace(/^get/, 'head'), handler]));
  return { ...get, ...head } as Record<ServiceOperationId, Handler>;
}
