// `make search-reindex [PROJECT=id]`: rebuilds one project's rows of the ClickHouse search index
// from Postgres (same configuration as the service; CLICKHOUSE_URL must be set).

import { parseArgs } from 'node:util';
import { openDatabase } from '../db/open-database.js';
import { loadConfigOrExit } from '../lifecycle.js';
import { createLogger } from '../log.js';
import { reindexSearch } from './reindex.js';
import { openSearchStore } from './search-store.js';

const { values } = parseArgs({ options: { project: { type: 'string' } }, strict: true });
const config = loadConfigOrExit();
const log = createLogger(config.logLevel);
const settings = config.search.clickhouse;
if (!settings) {
  process.stderr.write(
    'search-reindex: CLICKHOUSE_URL is not set; users(searchKeyword) is served by Postgres\n',
  );
  process.exit(2);
}
const db = await openDatabase(config, log);
const store = openSearchStore(settings);
try {
  const started = Date.now();
  const count = await reindexSearch(db.pool, store, values.project ?? config.project.id);
  process.stdout.write(
    `search-reindex: ${count} users indexed in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );
} finally {
  await store.close();
  await db.close();
}
