import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { expect } from 'chai';
import pg from 'pg';
import { migrate } from '../../../pipeline/db/migrate.js';
import { createPool, type Pool } from '../../../pipeline/db/pool.js';
import { insertTask } from '../../../pipeline/db/tasks/admission.js';
import { newTaskId } from '../../../schemas/task-id.js';
import { testDatabaseUrl, useTestSchema } from '../../support/database.js';

describe('db/migrate', () => {
  const db = useTestSchema();

  it('is safe to run twice, also concurrently', async () => {
    expect(await migrate(db())).to.deep.equal([]);
    expect(await Promise.all([migrate(db()), migrate(db())])).to.deep.equal([[], []]);
    const { rows } = await db().query<{ version: string }>(
      'SELECT version FROM schema_migrations ORDER BY version',
    );
    const files = (await readdir(new URL('../../../sql/', import.meta.url)))
      .filter((f) => f.endsWith('.sql'))
      .sort();
    expect(files).to.include.members(['001_users.sql', '002_identities.sql', '005_tasks.sql']);
    // An online migration records each statement as well (`<file>#<n>`).
    expect(rows.map((r) => r.version).filter((v) => !v.includes('#'))).to.deep.equal(files);
  });

  it('goes on with an online migration cut short, building again an index it left invalid', async () => {
    // As a run stopped while it built the project-led login id key: that index left invalid,
    // and neither that statement nor any after it recorded.
    await db().query(
      `CREATE UNIQUE INDEX identities_project_login_id ON identities (project_id, login_id_key, login_id)
         WHERE type = 'login_id';
       UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'identities_project_login_id'::regclass;
       DELETE FROM schema_migrations WHERE version = '028_project_keys.sql'
          OR (version LIKE '028_project_keys.sql#%' AND split_part(version, '#', 2)::int >= 4);`,
    );
    expect(await migrate(db())).to.deep.equal(['028_project_keys.sql']);
    const { rows } = await db().query<{ name: string; valid: boolean; definition: string }>(
      `SELECT c.relname AS name, i.indisvalid AS valid, pg_get_indexdef(i.indexrelid) AS definition
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE c.relnamespace = current_schema()::regnamespace AND c.relname LIKE 'identities%login_id'`,
    );
    expect(rows.map((r) => [r.name, r.valid])).to.deep.equal([['identities_login_id', true]]);
    expect(rows[0]?.definition).to.include('(project_id, login_id_key, login_id)');
  });

  it('makes each exact lookup a probe of one index', async () => {
    const client = await (db() as import('pg').Pool).connect();
    try {
      // Enough rows, analyzed, that the plan is the one a real table gets: with none, every scan
      // costs the same and the planner takes any of them.
      await client.query(
        `INSERT INTO users (id, project_id) SELECT gen_random_uuid(), 'p' || n % 50 FROM generate_series(1, 5000) n;
         INSERT INTO identities (id, project_id, user_id, type, login_id_key, login_id_type, login_id, original_login_id, email)
           SELECT gen_random_uuid(), project_id, id, 'login_id', 'email', 'email', id || '@x.test', id || '@x.test',
                  id || '@x.test'
             FROM users;
         INSERT INTO identities (id, project_id, user_id, type, provider_alias, provider_type, provider_subject_id,
                                 phone_number, preferred_username)
           SELECT gen_random_uuid(), project_id, id, 'oauth', 'google', 'google', id, id, id FROM users;
         ANALYZE users; ANALYZE identities;`,
      );
      const plan = async (sql: string, values: string[]) =>
        JSON.stringify((await client.query(`EXPLAIN (FORMAT JSON) ${sql}`, values)).rows[0]);
      expect(
        await plan(
          `SELECT user_id FROM identities
            WHERE project_id = $3 AND type = 'login_id' AND login_id_key = $1 AND login_id = $2`,
          ['email', 'a@example.com', 'p1'],
        ),
      ).to.include('"Index Name":"identities_login_id"');
      expect(
        await plan(
          `SELECT user_id FROM identities
            WHERE project_id = $3 AND type = 'oauth' AND provider_alias = $1 AND provider_subject_id = $2`,
          ['google', '1', 'p1'],
        ),
      ).to.include('"Index Name":"identities_oauth"');
      for (const column of ['email', 'phone_number', 'preferred_username']) {
        expect(
          await plan(`SELECT user_id FROM identities WHERE project_id = $2 AND ${column} = $1`, ['x', 'p1']),
        ).to.include(`"Index Name":"identities_${column}"`);
      }
    } finally {
      client.release();
    }
  });

  it("stores an import's message compressed with lz4", async () => {
    const records = Array.from({ length: 2_000 }, (_, i) => JSON.stringify({ email: `m${i}@example.com` }));
    const id = newTaskId('import');
    await insertTask(db(), {
      id,
      project: 'default',
      kind: 'import',
      message: records.join('\n'),
      options: {},
      total: records.length,
    });
    const { rows } = await db().query<{ method: string }>(
      'SELECT pg_column_compression(message) AS method FROM task_outbox WHERE task_id = $1',
      [id],
    );
    expect(rows.map((r) => r.method)).to.deep.equal(['lz4']);
  });

  it('keeps login ids unique per key and OAuth subjects unique per alias', async () => {
    await db().query(
      `INSERT INTO users (id, project_id) VALUES ('00000000-0000-0000-0000-000000000001', 'default'),
                                                 ('00000000-0000-0000-0000-000000000002', 'default')`,
    );
    const insertLogin = (id: string, user: string) =>
      db().query(
        `INSERT INTO identities (id, project_id, user_id, type, login_id_key, login_id_type, login_id, original_login_id)
         VALUES ($1, 'default', $2, 'login_id', 'email', 'email', 'same@example.com', 'Same@example.com')`,
        [id, user],
      );
    await insertLogin('10000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-000000000001');
    let code: string | undefined;
    await insertLogin('10000000-0000-0000-0000-000000000002', '00000000-0000-0000-0000-000000000002').catch(
      (e) => {
        code = e.code;
      },
    );
    expect(code).to.equal('23505');
  });
});

describe('db/migrate: a deployment of the version before projects', () => {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  let pool: Pool | undefined;
  before(async () => {
    const admin = new pg.Client({ connectionString: testDatabaseUrl() });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.end();
    pool = createPool({ connectionString: testDatabaseUrl(), schema, max: 2 });
  });
  after(async () => {
    await pool?.query(`DROP SCHEMA ${schema} CASCADE`);
    await pool?.end();
  });

  it("gives its rows the configured project, and so the rows its version's writers add while it upgrades", async () => {
    const db = pool as Pool;
    await migrate(db, 'acme', { through: '023' });
    // A writer of that version: it names no project.
    const insertOld = async (id: string) => {
      await db.query('INSERT INTO users (id) VALUES ($1)', [id]);
      await db.query(
        `INSERT INTO identities (id, user_id, type, login_id_key, login_id_type, login_id, original_login_id)
         VALUES (gen_random_uuid(), $1::uuid, 'login_id', 'email', 'email', $1::text || '@old.test', $1::text || '@old.test')`,
        [id],
      );
    };
    await insertOld('00000000-0000-4000-8000-000000000001');
    expect(await migrate(db, 'acme')).to.include.members(['024_user_projects.sql', '028_project_keys.sql']);
    await insertOld('00000000-0000-4000-8000-000000000002');
    const { rows } = await db.query<{ project_id: string }>(
      'SELECT project_id FROM users UNION ALL SELECT project_id FROM identities',
    );
    expect(rows.map((r) => r.project_id)).to.deep.equal(['acme', 'acme', 'acme', 'acme']);
  });
});
