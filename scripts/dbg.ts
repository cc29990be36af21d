import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { configFromDocument } from '../pipeline/config.js';
import { migrate } from '../pipeline/db/migrate.js';
import { createPool } from '../pipeline/db/pool.js';
import { insertTask } from '../pipeline/db/tasks.js';
import { runImport } from '../pipeline/import/run-import.js';
import { createLogger } from '../pipeline/log.js';
import { newTaskId } from '../pipeline/tasks/task-id.js';

const url = process.env.U as string;
const c = new pg.Client(url);
await c.connect();
await c.query('DROP SCHEMA IF EXISTS dbg CASCADE; CREATE SCHEMA dbg');
await c.end();
const pool = createPool({ connectionString: url, schema: 'dbg', max: 4 });
await migrate(pool);
for (const k of ['a', 'b']) await pool.query('INSERT INTO roles (id, key) VALUES ($1,$2)', [randomUUID(), k]);
const config = configFromDocument({
  project: { custom_attributes: [{ name: 'member_id', type: 'string' }] },
});
const HASH = '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';
const N = 20000;
const records = Array.from({ length: N }, (_, i) => ({
  email: `i${i}@example.com`,
  preferred_username: `i${i}`,
  password: { type: 'bcrypt', password_hash: HASH },
  roles: ['a', 'b'],
  custom_attributes: { member_id: `M${i}` },
}));
const id = newTaskId('import');
await insertTask(pool, {
  id,
  kind: 'import',
  input: JSON.stringify({ identifier: 'email', records }),
  options: { identifier: 'email', upsert: false },
  total: N,
});
const t = Date.now();
await runImport(pool, config, id, createLogger('warn'));
console.log('records/s', N / ((Date.now() - t) / 1000));
await pool.end();
