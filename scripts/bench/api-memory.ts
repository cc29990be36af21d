import { readFileSync } from 'node:fs';
import { Pool as HttpPool } from 'undici';
import { dropSchema, freshSchema, requestBodies } from './imports.js';
import { benchAdminKeys, benchPort, schemaUrl, startProcess } from './processes.js';
import { type BenchRow, row } from './report.js';

const CLIENTS = 50;
const ROUNDS = 12;
const LOOKUPS_PER_IMPORT = 4;
const LOOKUP = JSON.stringify({
  query: 'query($v: String!) { getUserByLoginID(loginIDKey: "email", loginIDValue: $v) { id } }',
  variables: { v: 'import1@example.com' },
});

/** A line of /proc/<pid>/status in MB: VmRSS (now) or VmHWM (the peak). */
function memoryMb(pid: number | undefined, field: 'VmRSS' | 'VmHWM'): number {
  const kb = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (!kb) throw new Error(`no ${field} for the API process`);
  return Number(kb) / 1024;
}

/**
 * The facade's memory under load: 50 clients, each sending rounds of one ~480 KB import request
 * and four lookups, against the API process alone (its tasks wait for a worker that is not
 * there). The row is its peak RSS, beside its RSS at rest after start.
 */
export async function benchApiMemory(
  databaseUrl: string,
  brokers: string,
  log: (l: string) => void,
): Promise<BenchRow[]> {
  const pool = await freshSchema(databaseUrl, 'bench_api_memory');
  await pool.end();
  const port = benchPort();
  const { jwksFile, token } = await benchAdminKeys('api-memory', port);
  const api = await startProcess(
    'api/main.ts',
    [],
    {
      DATABASE_URL: schemaUrl(databaseUrl, 'bench_api_memory'),
      KAFKA_BROKERS: brokers,
      KAFKA_TOPIC_PREFIX: `benchmem${Date.now()}.`,
      ADMIN_JWKS_FILE: jwksFile,
      TRUST_PROXY: 'true',
      PORT: String(port),
      // No worker takes these imports: the backlog limit would refuse them before the load is
      // reached, and the section measures the facade, not the limit.
      IMPORT_PENDING_RECORDS_LIMIT: '100000000',
    },
    'Admin API on',
  );
  const http = new HttpPool(`http://localhost:${port}`, { connections: CLIENTS });
  const bodies = requestBodies();
  const headers = {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    'x-forwarded-proto': 'https',
  };
  const call = async (path: string, body: string) => {
    const res = await http.request({ path, method: 'POST', headers, body });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${text.slice(0, 200)}`);
  };
  try {
    await call('/_api/admin/graphql', LOOKUP);
    const atRest = memoryMb(api.pid, 'VmRSS');
    const started = Date.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        for (let round = 0; round < ROUNDS; round++) {
          await call('/_api/admin/users/import', bodies[(client + round) % bodies.length] as string);
          for (let n = 0; n < LOOKUPS_PER_IMPORT; n++) await call('/_api/admin/graphql', LOOKUP);
        }
      }),
    );
    const peak = memoryMb(api.pid, 'VmHWM');
    log(
      `api memory: ${CLIENTS * ROUNDS} imports of ~480 KB and ${CLIENTS * ROUNDS * LOOKUPS_PER_IMPORT} lookups ` +
        `from ${CLIENTS} clients in ${((Date.now() - started) / 1000).toFixed(1)} s; RSS ${atRest.toFixed(0)} MB at rest, peak ${peak.toFixed(0)} MB`,
    );
    return [row('api.peak_rss_mixed_load', peak, 'MB', 'API RSS at rest after start', atRest, '< 300 MB')];
  } finally {
    await http.close();
    await api.stop();
    await dropSchema(databaseUrl, 'bench_api_memory');
  }
}
