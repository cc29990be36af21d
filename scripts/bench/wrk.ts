import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('./graphql-load.lua', import.meta.url));

/** What one wrk run measured. */
export interface WrkResult {
  readonly qps: number;
  readonly p50: number;
  readonly p99: number;
  readonly failures: number;
}

export interface WrkLoad {
  readonly url: string;
  readonly token: string;
  readonly document: string;
  /** JSON template of the variables; `%d` is replaced by a random generated user number. */
  readonly variables: string;
  readonly users: number;
  readonly step?: number;
  /** User i is asked of the project whose Host is this template, `%d` being (i // run) % projects. */
  readonly hosts?: { readonly template: string; readonly projects: number; readonly run: number };
}

/**
 * Drives the API with wrk, a native load generator, so that the client does not take the CPU the
 * server is measured on (a Node client took a quarter of a core here). Latencies in ms.
 */
export async function wrk(load: WrkLoad, connections: number, seconds: number): Promise<WrkResult> {
  const { stdout } = await run(
    'wrk',
    ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', SCRIPT, load.url],
    {
      env: {
        ...process.env,
        BENCH_TOKEN: load.token,
        BENCH_DOCUMENT: load.document,
        BENCH_VARIABLES: load.variables,
        BENCH_USERS: String(load.users),
        BENCH_STEP: String(load.step ?? 1),
        ...(load.hosts
          ? {
              BENCH_HOST: load.hosts.template,
              BENCH_PROJECTS: String(load.hosts.projects),
              BENCH_RUN: String(load.hosts.run),
            }
          : {}),
      },
    },
  );
  const line = /BENCH requests=(\d+) seconds=([\d.]+) p50_us=([\d.]+) p99_us=([\d.]+) failures=(\d+)/.exec(
    stdout,
  );
  if (!line) throw new Error(`unexpected wrk output: ${stdout}`);
  const [, requests, secs, p50, p99, failures] = line.map(Number) as number[];
  return {
    qps: (requests as number) / (secs as number),
    p50: (p50 as number) / 1000,
    p99: (p99 as number) / 1000,
    failures: failures as number,
  };
}
