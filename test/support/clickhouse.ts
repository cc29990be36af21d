import { randomBytes } from 'node:crypto';
import { createClient } from '@clickhouse/client';

/** The real ClickHouse server started by `make test`. */
export function testClickHouseUrl(): string {
  const url = process.env.TEST_CLICKHOUSE_URL;
  if (!url) throw new Error('TEST_CLICKHOUSE_URL is not set: run the tests with `make test`');
  return url;
}

/**
 * Settings of a ClickHouse search index in a database of its own for the calling describe block
 * (dropped after it), fed through Kafka.
 */
export function useClickHouseSettings(): Record<string, string> {
  const database = `t_${randomBytes(5).toString('hex')}`;
  after(async () => {
    const client = createClient({ url: testClickHouseUrl() });
    await client.command({ query: `DROP DATABASE IF EXISTS ${database}` });
    await client.close();
  });
  return { clickhouse_url: testClickHouseUrl(), clickhouse_database: database };
}
