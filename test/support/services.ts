import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/** The real services `make test` starts, each with its script in scripts/services/. */
export type TestService = 'postgres' | 'kafka' | 'azurite' | 'clickhouse';

const run = promisify(execFile);

/** Stops a real service (Postgres: a fast shutdown that ends every session). */
export async function stopService(service: TestService): Promise<void> {
  await run(`scripts/services/${service}.sh`, ['stop']);
}

/** Starts a real service again and waits until it accepts connections. */
export async function startService(service: TestService): Promise<void> {
  await run(`scripts/services/${service}.sh`, ['start']);
}

/**
 * Makes sure the service is up again after the calling describe block, even when a test failed
 * while it was stopped: the next test files need it.
 */
export function restoreServiceAfter(service: TestService): void {
  after(async function () {
    this.timeout(120_000);
    await startService(service);
  });
}
