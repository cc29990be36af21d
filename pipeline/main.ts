// `make pipeline`: runs the pipeline workers (import and export) on the configured task bus.

import { openExportStorage } from './blob/open-blob-storage.js';
import { createBus } from './bus/create-bus.js';
import { loadConfig } from './config.js';
import { openDatabase } from './db/open-database.js';
import { runService } from './lifecycle.js';
import { createLogger } from './log.js';
import { startWorkers } from './workers.js';

const config = loadConfig();
const log = createLogger(config.logLevel);

await runService(log, async ({ started }) => {
  const db = await openDatabase(config, log);
  started('database', () => db.close());
  const storage = await openExportStorage(config, log);
  started('export storage', () => storage.close());
  const bus = createBus(config, db.pool, log);
  started('task bus', () => bus.close());
  const workers = await startWorkers(config, db.pool, bus, storage.blobs, log);
  started('pipeline workers', () => workers.stop());
  log.info({ transport: config.kafkaBrokers.length > 0 ? 'kafka' : 'postgres' }, 'pipeline workers running');
  process.stdout.write('Pipeline workers running\n');
});
