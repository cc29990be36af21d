// `make bench`: generates the data, measures every performance goal of the issues, prints the table
// and writes .bench/results.json. Each row is compared with a baseline measured in the same run.
import { benchUsers } from './bench-schema.js';
import { benchLookups } from './lookups.js';
import { report } from './report.js';

const url = process.env.BENCH_DATABASE_URL;
if (!url) throw new Error('BENCH_DATABASE_URL is not set: run `make bench`');
const users = Number(process.env.BENCH_USERS ?? 1_000_000);
const log = (line: string) => process.stdout.write(`${line}\n`);

const db = await benchUsers(url, users, log);
try {
  const rows = await benchLookups(db, url, users, log);
  report(rows);
} finally {
  await db.end();
}
