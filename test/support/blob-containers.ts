import { randomBytes } from 'node:crypto';
import { BlobServiceClient } from '@azure/storage-blob';

/** The Azurite started by `make test`. */
export function testBlobConnectionString(): string {
  const value = process.env.TEST_AZURE_STORAGE_CONNECTION_STRING;
  if (!value)
    throw new Error('TEST_AZURE_STORAGE_CONNECTION_STRING is not set: run the tests with `make test`');
  return value;
}

// Every container this run names, so the run can take its files away at its end: a long-lived
// Azurite keeps every file it was given, and a disk that fills stops every service on it.
const named = new Set<string>();

/** A blob container of its own for one describe block, so files are never shared. */
export function uniqueContainer(): string {
  const name = `t-${randomBytes(6).toString('hex')}`;
  named.add(name);
  return name;
}

/** Deletes the containers this run named (only those: another run may share the Azurite). */
export async function deleteNamedContainers(): Promise<void> {
  if (named.size === 0) return;
  const service = BlobServiceClient.fromConnectionString(testBlobConnectionString());
  await Promise.all([...named].map((name) => service.getContainerClient(name).deleteIfExists()));
  named.clear();
}
