import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type PartHealth, readinessProbe, type ServiceDependencies } from './health.js';
import { registry } from './metrics.js';

/** What an operator path answers: status, content type and body. */
export interface OperatorAnswer {
  readonly status: number;
  readonly type: string;
  readonly body: string;
}

/**
 * `/healthz`: the process is alive (200). `/readyz`: Postgres, the bus and the blob store answer
 * (200), else 503 naming the parts that do not. `/metrics`: the Prometheus text format.
 */
async function operatorAnswer(
  path: string,
  readiness: () => Promise<PartHealth[]>,
): Promise<OperatorAnswer | undefined> {
  if (path === '/healthz') return { status: 200, type: 'application/json', body: '{"status":"ok"}' };
  if (path === '/readyz') {
    const parts = await readiness();
    const down = parts.filter((p) => !p.ok);
    return {
      status: down.length === 0 ? 200 : 503,
      type: 'application/json',
      body: JSON.stringify({
        status: down.length === 0 ? 'ready' : 'unavailable',
        ...(down.length > 0 ? { unavailable: down.map((p) => p.part) } : {}),
        parts,
      }),
    };
  }
  if (path === '/metrics') return { status: 200, type: registry.contentType, body: await registry.metrics() };
  return undefined;
}

/**
 * Serves the operator paths on a port of their own, never the public one: they take no token
 * (PIPELINE_HTTP_PORT for a worker process, API_OPERATOR_PORT for an API process).
 */
export async function serveOperatorPaths(port: number, deps: ServiceDependencies): Promise<Server> {
  const readiness = readinessProbe(deps);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const answer = req.method === 'GET' ? operatorAnswer(path, readiness) : Promise.resolve(undefined);
    answer.then(
      (answer) => {
        const { status, type, body } = answer ?? { status: 404, type: 'text/plain', body: 'not found' };
        res.writeHead(status, { 'content-type': type }).end(body);
      },
      () => res.writeHead(500).end(),
    );
  });
  server.listen(port);
  await once(server, 'listening');
  return server;
}
