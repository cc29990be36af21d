import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { startEmbeddedAzurite } from '../../../pipeline/blob/embedded-azurite.js';
import { startEmbeddedPostgres } from '../../../pipeline/db/embedded-postgres.js';
import { requireFreePort } from '../../../pipeline/free-port.js';
import { createLogger } from '../../../pipeline/log.js';

/** A port another process holds, for the test's length. */
async function takenPort(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { server, port: typeof address === 'object' && address ? address.port : 0 };
}

/** The message a start was refused with ('started' when it was not). */
async function refusal(start: () => Promise<unknown>): Promise<{ message: string }> {
  const err = await start().then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  return { message: err?.message ?? 'started' };
}

describe('free-port: a taken port is named at once with the setting that moves it', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'free-port-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const log = createLogger('silent');

  it('passes a free port and refuses a taken one, naming the setting', async () => {
    const { server, port } = await takenPort();
    try {
      const refused = await refusal(() => requireFreePort(port, 'PORT', 'the admin API'));
      expect(refused.message).to.equal(
        `the admin API cannot listen on port ${port}: another process holds it. Stop that process, or set PORT to a free port`,
      );
    } finally {
      server.close();
    }
    await requireFreePort(port, 'PORT', 'the admin API');
  });

  it('stops the embedded Postgres and Azurite before they wait on a port another process holds', async () => {
    const { server, port } = await takenPort();
    try {
      const postgres = await refusal(() => startEmbeddedPostgres(dir, port, log));
      expect(postgres.message).to.include(`port ${port}`).and.to.include('EMBEDDED_POSTGRES_PORT');
      const azurite = await refusal(() => startEmbeddedAzurite(dir, port, log));
      expect(azurite.message).to.include(`port ${port}`).and.to.include('EMBEDDED_AZURITE_PORT');
    } finally {
      server.close();
    }
  });
});
