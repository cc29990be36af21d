// `make migrate`: applies the migrations of sql/ to the configured (or embedded) database and exits.
import { loadConfig } from '../config.js';
import { createLogger } from '../log.js';
import { openDatabase } from './open-database.js';

const config = loadConfig();
const log = createLogger(config.logLevel);
const db = await openDatabase(config, log, 1, 0, { migrate: true });
log.info('database is up to date');
await db.close();
