import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { requireFreePort } from '../free-port.js';
import type { Logger } from '../log.js';

// Azurite's published development account: the same in every Azurite, so not a secret.
const ACCOUNT = 'devstoreaccount1';
const ACCOUNT_KEY =
  'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';
const READY = 'successfully listens';

/** Azurite's blob service run as a child process of the embedded default. */
export interface EmbeddedAzurite {
  readonly connectionString: string;
  stop(): Promise<void>;
}

/** How a process reaches the embedded Azurite on `port` (started by this process or another). */
export function embeddedAzuriteConnectionString(port: number): string {
  return `DefaultEndpointsProtocol=http;AccountName=${ACCOUNT};AccountKey=${ACCOUNT_KEY};BlobEndpoint=http://127.0.0.1:${port}/${ACCOUNT};`;
}

/** Starts Azurite's blob service on loopback; its files live in `<dataDir>/azurite` across restarts. */
export async function startEmbeddedAzurite(
  dataDir: string,
  port: number,
  log: Logger,
): Promise<EmbeddedAzurite> {
  const location = path.join(dataDir, 'azurite');
  await requireFreePort(port, 'EMBEDDED_AZURITE_PORT', 'the embedded Azurite', '127.0.0.1');
  await mkdir(location, { recursive: true });
  const entry = createRequire(import.meta.url).resolve('azurite/dist/src/blob/main.js');
  const child: ChildProcess = spawn(
    process.execPath,
    [
      // The store shares the service's cores: V8 counts its request bodies' memory in its heap's
      // limits rather than collecting the whole heap each time they pass a fixed amount.
      '--external-memory-accounted-in-global-limit',
      entry,
      ...['--blobHost', '127.0.0.1', '--blobPort', String(port), '--location', location],
      // The newest @azure/storage-blob speaks an API version Azurite does not know yet.
      ...['--skipApiVersionCheck', '--disableTelemetry', '--silent'],
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(READY)) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`azurite exited with ${code}: ${output.slice(-500)}`)));
  });
  child.stdout?.removeAllListeners('data');
  child.stderr?.removeAllListeners('data');
  child.stdout?.resume();
  child.stderr?.resume();
  log.info({ port }, 'embedded Azurite started');
  return {
    connectionString: embeddedAzuriteConnectionString(port),
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
