import pg from 'pg';
import { configFromDocument } from '../pipeline/config.js';
import { migrate } from '../pipeline/db/migrate.js';
import { createPool } from '../pipeline/db/pool.js';
import { insertTask } from '../pipeline/db/tasks.js';
import { runImport } from '../pipeline/import/run-import.js';
import { createLogger } from '../pipeline/log.js';
import { newTaskId } from '../pipeline/tasks/task-id.js';

const url = 'postgres://postgres@127.0.0.1:54329/postgres';
const c = new pg.Client(url);
await c.connect();
await c.query('DROP SCHEMA IF EXISTS dbg CASCADE; CREATE SCHEMA dbg');
await c.end();
const pool = createPool({ connectionString: url, schema: 'dbg', max: 4 });
await migrate(pool);
const config = configFromDocument({ project: {} });
const input = JSON.stringify({
  identifier: 'email',
  records: [{ email: 'a@b.co', name: 'A' }, { email: 'c@d.co' }],
});
const id = newTaskId('import');
await insertTask(pool, {
  id,
  kind: 'import',
  input,
  options: { identifier: 'email', upsert: false },
  total: 2,
});
const t = setTimeout(() => console.log('HUNG'), 5000);
await runImport(pool, config, id, createLogger('debug'));
clearTimeout(t);
console.log(
  (await pool.query('SELECT status, summary FROM tasks')).rows,
  (await pool.query('SELECT * FROM import_details')).rows,
);
await pool.end();
