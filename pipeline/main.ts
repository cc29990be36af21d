// `make pipeline`: runs the pipeline workers (import and export) on the configured task bus.

import { loadConfigOrExit, runService } from './lifecycle.js';
import { createLogger } from './log.js';
import { startPipelineParts } from './service-parts.js';

const config = loadConfigOrExit();
const log = createLogger(config.logLevel);

await runService(log, async ({ started }) => {
  await startPipelineParts(config, log, started, { workers: true });
  log.info({ transport: config.kafkaBrokers.length > 0 ? 'kafka' : 'postgres' }, 'pipeline workers running');
  process.stdout.write('Pipeline workers running\n');
});
