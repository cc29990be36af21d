import { BlobServiceClient } from '@azure/storage-blob';

/**
 * Deletes every container of the bench (named `bench-…`): its files are measured, never read
 * again, and the 1M-user runs would otherwise fill the disk the services share.
 */
export async function deleteBenchContainers(connectionString: string): Promise<number> {
  const service = BlobServiceClient.fromConnectionString(connectionString);
  let deleted = 0;
  for await (const container of service.listContainers({ prefix: 'bench-' })) {
    await service.getContainerClient(container.name).deleteIfExists();
    deleted++;
  }
  return deleted;
}
