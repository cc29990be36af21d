import { createServer } from 'node:net';
import { EngineError } from './errors.js';

/**
 * Fails at once when `port` is taken on `host`, naming the setting that moves it: a server that
 * would otherwise wait for its child to come up (the embedded Postgres gives up after about 40 s)
 * or fail with a bare EADDRINUSE says what to change. Without `host`, every address (as the API
 * listens).
 */
export async function requireFreePort(port: number, setting: string, what: string, host?: string) {
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new EngineError(
              'PortTaken',
              `${what} cannot listen on port ${port}: another process holds it. Stop that process, or set ${setting} to a free port`,
            )
          : err,
      ),
    );
    probe.listen({ port, ...(host ? { host } : {}) }, () => probe.close(() => resolve()));
  });
}
