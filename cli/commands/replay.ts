import type { LogPoint } from '../../pipeline/bus/bus.js';
import { createBus } from '../../pipeline/bus/create-bus.js';
import { loadConfig } from '../../pipeline/config.js';
import { embeddedConnectionString } from '../../pipeline/db/embedded-postgres.js';
import { migrate } from '../../pipeline/db/migrate.js';
import { createPool } from '../../pipeline/db/pool.js';
import { createLogger } from '../../pipeline/log.js';
import { replayImports } from '../../pipeline/replay/replay-imports.js';
import { CliError, EXIT } from '../cli-error.js';
import { count, progressOnStderr } from '../progress.js';

/** What `make replay` / `userctl replay` was asked for. */
export interface ReplayOptions {
  readonly from: string;
  readonly to?: string | undefined;
  /** The project whose imports are replayed; the configured project when absent. */
  readonly project?: string | undefined;
  readonly upsert: boolean;
  readonly dryRun: boolean;
}

/** Exit code of a replay stopped by Ctrl-C: started again, it goes on where it stopped. */
const EXIT_INTERRUPTED = 130;

/**
 * Replays the import log into new import tasks, with the service's own configuration (DATABASE_URL
 * and KAFKA_BROKERS, or the embedded default's Postgres that `make start` runs). The workers of
 * the running service apply the tasks.
 */
export async function replay(options: ReplayOptions): Promise<number> {
  const from = pointOf('FROM', options.from);
  const to = options.to ? pointOf('TO', options.to) : undefined;
  const config = loadConfig();
  const log = createLogger(process.env.LOG_LEVEL ?? 'warn');
  const pool = createPool({
    connectionString: config.databaseUrl ?? embeddedConnectionString(config.embeddedPostgresPort),
    max: 3,
  });
  const bus = createBus(config, pool, log);
  const interrupt = new AbortController();
  const onSignal = () => interrupt.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const progress = progressOnStderr(options.dryRun ? 'replay (dry run)' : 'replay');
  const started = Date.now();
  try {
    await migrate(pool, config.project.id).catch((err: Error) => {
      throw new CliError(`cannot reach the database: ${err.message}`);
    });
    const summary = await replayImports(
      {
        pool,
        log: bus.importLog,
        bus: config.kafkaBrokers.length > 0 ? 'kafka' : 'postgres',
        groupPrefix: config.kafkaTopicPrefix,
        project: options.project ?? config.project.id,
      },
      {
        from,
        ...(to ? { to } : {}),
        ...(options.upsert ? { upsert: true } : {}),
        dryRun: options.dryRun,
      },
      {
        signal: interrupt.signal,
        onImport: (i) => {
          if (!options.dryRun) return;
          process.stdout.write(
            `${i.logged_at.toISOString()} ${i.partition}:${i.offset} ${i.replay_of} ${i.records} records upsert=${i.upsert}${i.skipped ? ` skipped: ${i.skipped}` : ''}\n`,
          );
        },
        onProgress: (p) => {
          const seconds = Math.max((Date.now() - started) / 1000, 0.001);
          progress.update({
            done: p.messages,
            total: p.messages_total,
            detail: `${count(p.messages)} of ${count(p.messages_total)} messages, ${count(p.tasks)} tasks, ${count(p.records)} records`,
            rate: `${count(Math.round(p.messages / seconds))} messages/s`,
          });
        },
      },
    );
    progress.stop();
    const what = summary.dry_run ? 'would create' : 'created';
    process.stderr.write(
      `replay ${summary.replay_id}${summary.resumed ? ' (resumed)' : ''}: ${count(summary.messages)} messages read, ` +
        `${what} ${count(summary.tasks)} import tasks ` +
        `(${count(summary.records)} records), ${count(summary.skipped)} skipped` +
        `${summary.finished ? '' : '; interrupted: run the same command again to go on'}\n`,
    );
    return summary.finished ? EXIT.ok : EXIT_INTERRUPTED;
  } finally {
    progress.stop(false);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await bus.close();
    await pool.end();
  }
}

/** FROM/TO: an RFC 3339 time, or an offset (a whole number). */
function pointOf(name: string, text: string): LogPoint {
  if (/^\d+$/.test(text)) return { offset: text };
  const time = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(text)
    ? new Date(text)
    : undefined;
  if (!time || Number.isNaN(time.getTime())) {
    throw new CliError(`${name} must be an RFC 3339 time (2026-11-23T10:00:00Z) or an offset, not "${text}"`);
  }
  return { time };
}
