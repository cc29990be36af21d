// `make search-reindex`: rebuilds the ClickHouse search index from Postgres (same configuration
// as the service; CLICKHOUSE_URL must be set).

import { openDatabase } from '../db/open-database.js';
import { loadConfigOrExit } from '../lifecycle.js';
import { createLogger } from '../log.js';
import { reindexSearch } from './reindex.js';
import { openSearchStore } from './search-store.js';

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
  const count = await reindexSearch(db.pool, store, config.project.id);
  process.stdout.write(
    `search-reindex: ${count} users indexed in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );
} finally {
  await store.close();
  await db.close();
}
