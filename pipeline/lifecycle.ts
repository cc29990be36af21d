import { loadConfig, requireDeploymentKeys, type ServiceConfig } from './config.js';
import { ConfigError } from './errors.js';
import type { Logger } from './log.js';

/** The parts a service process has started, stopped in reverse order when it ends. */
export interface Lifecycle {
  /** Records a started part; its `stop` runs when the process ends, after every later part's. */
  started(name: string, stop: () => Promise<void>): void;
}

/**
 * How `make start`, `make api` and `make pipeline` end: SIGINT or SIGTERM stop every started part
 * and exit 0 (1 when they are not all stopped within `stopDeadlineMs`: SHUTDOWN_GRACE_SECONDS); a failed start (a port
 * already taken, a migration that fails), an uncaught error or an unhandled rejection stops them
 * and exits 1. Without this, the embedded default's Postgres and Azurite outlived a process that
 * crashed and held their ports and data folder against the next start.
 */
export async function runService(
  log: Logger,
  start: (lifecycle: Lifecycle) => Promise<void>,
  { stopDeadlineMs = 20_000 } = {},
): Promise<void> {
  const parts: { name: string; stop: () => Promise<void> }[] = [];
  const late: Promise<void>[] = [];
  let stopping = false;

  const stop = async (reason: string, exitCode: number): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info({ reason }, 'shutting down');
    // A part that does not stop (a task stuck on a dependency) must not keep the process, and the
    // database sessions and locks it holds, alive forever: past the deadline it exits 1.
    setTimeout(() => {
      log.error({ reason, deadline_ms: stopDeadlineMs }, 'could not stop in time; exiting');
      process.exit(exitCode === 0 ? 1 : exitCode);
    }, stopDeadlineMs).unref();
    for (const part of [...parts].reverse()) {
      try {
        await part.stop();
      } catch (err) {
        log.error({ err, part: part.name }, 'could not stop cleanly');
      }
    }
    await Promise.all(late);
    process.exit(exitCode);
  };
  const fail = (what: string) => (err: unknown) => {
    log.fatal({ err }, what);
    void stop(what, 1);
  };

  process.on('SIGINT', () => void stop('SIGINT', 0));
  process.on('SIGTERM', () => void stop('SIGTERM', 0));
  process.on('uncaughtException', fail('uncaught error'));
  process.on('unhandledRejection', fail('unhandled rejection'));
  try {
    await start({
      started: (name, stopPart) => {
        // Told to stop while it was starting: what starts meanwhile stops at once (and before the
        // exit, which waits for it).
        if (stopping)
          late.push(
            stopPart().catch((err: unknown) => log.error({ err, part: name }, 'could not stop cleanly')),
          );
        else parts.push({ name, stop: stopPart });
      },
    });
  } catch (err) {
    fail('could not start')(err);
  }
}

/**
 * The configuration of a service process of `role` (a tool that serves nothing: none); an invalid
 * one, or one without the keys the role needs outside the embedded default, ends the process with
 * exit code 2 and one line naming each variable and its rule, never a stack trace.
 */
export function loadConfigOrExit(
  role?: 'api' | 'worker',
  env: NodeJS.ProcessEnv = process.env,
): ServiceConfig {
  try {
    const config = loadConfig(env);
    if (role) requireDeploymentKeys(config, role);
    return config;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
}
