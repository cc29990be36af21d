// `make pipeline`: runs the pipeline workers (import and export) on the configured task bus.

import { loadConfigOrExit, runService } from './lifecycle.js';
import { createLogger } from './log.js';
import { serveOperatorPaths } from './operator/operator-http.js';
import { startPipelineParts } from './service-parts.js';

const config = loadConfigOrExit('worker');
const log = createLogger(config.logLevel);

await runService(
  log,
  async ({ started }) => {
    const parts = await startPipelineParts(config, log, started, { workers: true });
    if (config.pipelineHttpPort > 0) {
      const server = await serveOperatorPaths(config.pipelineHttpPort, parts);
      started('health and metrics', async () => {
        server.close();
        server.closeAllConnections();
      });
    }
    log.info(
      { transport: config.kafkaBrokers.length > 0 ? 'kafka' : 'postgres' },
      'pipeline workers running',
    );
    process.stdout.write('Pipeline workers running\n');
  },
  { stopDeadlineMs: config.shutdownGraceSeconds * 1000 },
);
