import { BENCH_SCHEMA, benchUsers } from './bench-schema.js';
import { type Lookup, loneClientTurns, lookups, prewarm } from './lookups.js';
import { type BenchProcess, benchAdminKeys, benchPort, schemaUrl, startProcess } from './processes.js';
import { type BenchRow, row } from './report.js';
import { putBenchProjects } from './tenancy.js';
import type { WrkLoad } from './wrk.js';

// Versioned: a change to the generated data must not reuse an older schema of the same size.
const SCHEMA = 'bench_tenancy_lookups_v1';
const PROJECTS = 1_000;
/** Consecutive users of one project: every tenth has OAuth, so each project holds some. */
const RUN = 10;
const HOST = 'p%d.lookups.bench';

/**
 * `tenancy.lookup.<lookup>.http_p99_1000_projects`: each lookup with one client on an API whose
 * `count` users belong to 1,000 projects, each request to the Host of its user's project, beside
 * the same lookup on an API whose `count` users belong to one project (the lookups section's
 * schema), the two taking turns window by window. Only the project's Host, its admin keys and the
 * project leading every key differ: the p99s match.
 */
export async function benchLookupsOfManyProjects(
  databaseUrl: string,
  count: number,
  log: (line: string) => void,
): Promise<BenchRow[]> {
  const one = await benchUsers(databaseUrl, count, log);
  const many = await benchUsers(databaseUrl, count, log, {
    schema: SCHEMA,
    projectOf: (i) => `p${Math.floor(i / RUN) % PROJECTS}`,
  });
  const servers: BenchProcess[] = [];
  try {
    const onePort = benchPort();
    const manyPort = onePort + 1;
    // One token for both: its audience is the one-project API's origin, and every project's.
    const { jwksFile, token } = await benchAdminKeys('tenancy-lookups', onePort);
    await putBenchProjects(
      many,
      Array.from({ length: PROJECTS }, (_, p) => ({
        id: `p${p}`,
        domain: HOST.replace('%d', String(p)),
        public_origin: `http://localhost:${onePort}`,
      })),
    );
    await prewarm(one, BENCH_SCHEMA, log);
    await prewarm(many, SCHEMA, log);
    for (const [port, schema] of [
      [onePort, BENCH_SCHEMA],
      [manyPort, SCHEMA],
    ] as const) {
      servers.push(
        await startProcess(
          'api/main.ts',
          [],
          { PORT: String(port), DATABASE_URL: schemaUrl(databaseUrl, schema), ADMIN_JWKS_FILE: jwksFile },
          'Admin API on',
        ),
      );
    }
    const load = (lookup: Lookup, port: number): WrkLoad => ({
      url: `http://localhost:${port}/_api/admin/graphql`,
      token,
      document: lookup.document,
      variables: lookup.variables,
      users: count,
      step: lookup.step,
    });
    const onOne = (lookup: Lookup) => load(lookup, onePort);
    const onMany = (lookup: Lookup) => ({
      ...load(lookup, manyPort),
      hosts: { template: HOST, projects: PROJECTS, run: RUN },
    });
    const turns = await loneClientTurns(
      lookups(),
      onMany,
      onOne,
      [`${PROJECTS} projects`, 'one project'],
      log,
    );
    return turns.map(({ lookup, a, b }) => {
      if (a.failures + b.failures > 0) {
        throw new Error(`${lookup.name}: ${a.failures + b.failures} answers had errors or no user`);
      }
      return row(
        `tenancy.lookup.${lookup.name}.http_p99_1000_projects`,
        a.p99,
        'ms',
        'same lookup, the same users in one project (p99)',
        b.p99,
        'ratio <= 1.1',
      );
    });
  } finally {
    for (const server of servers) await server.stop();
    await many.end();
    await one.end();
  }
}
