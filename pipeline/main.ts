// `make pipeline`: runs the pipeline workers (import and export) on the configured task bus.

import { openExportStorage } from './blob/open-blob-storage.js';
import { createBus } from './bus/create-bus.js';
import { loadConfig } from './config.js';
import { openDatabase } from './db/open-database.js';
import { createLogger } from './log.js';
import { startWorkers } from './workers.js';

const config = loadConfig();
const log = createLogger(config.logLevel);
const db = await openDatabase(config, log);
const storage = await openExportStorage(config, log);
const bus = createBus(config, db.pool, log);
const workers = await startWorkers(config, db.pool, bus, storage.blobs, log);
log.info({ transport: config.kafkaBrokers.length > 0 ? 'kafka' : 'postgres' }, 'pipeline workers running');
process.stdout.write('Pipeline workers running\n');

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'stopping workers');
  await workers.stop();
  await storage.close();
  await db.close();
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
