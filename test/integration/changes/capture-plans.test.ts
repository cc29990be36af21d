import { expect } from 'chai';
import type { PoolClient } from '../../../pipeline/db/pool.js';
import { useTestSchema } from '../../support/database.js';

// The member tables' capture runs inside every import batch. A connection keeps what it planned
// before, so the plan the capture runs with must not be the one made when the table was small.

const PROJECT = 'capture-plans';

/** The plans Postgres ran for the client's statements and the statements they ran, as logged. */
async function loggingPlans(client: PoolClient): Promise<string[]> {
  const plans: string[] = [];
  client.on('notice', (notice) => {
    if (notice.message?.includes('Query Text:')) plans.push(notice.message);
  });
  await client.query("LOAD 'auto_explain'");
  await client.query(
    `SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on;
     SET client_min_messages = log`,
  );
  return plans;
}

/** `count` new users of the project, in one statement. */
async function addUsers(client: PoolClient, count: number): Promise<string[]> {
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO users (id, project_id, standard_attributes, custom_attributes)
     SELECT gen_random_uuid(), $1, '{}', '{}' FROM generate_series(1, $2) RETURNING id`,
    [PROJECT, count],
  );
  return rows.map((r) => r.id);
}

describe('change capture of member rows', function () {
  this.timeout(60_000);
  const db = useTestSchema();

  it('reads the changed users by key on a connection that first captured when users was small', async () => {
    const client = await db().connect();
    try {
      const plans = await loggingPlans(client);
      const { rows } = await client.query<{ id: string }>(
        `INSERT INTO roles (id, key, project_id) VALUES (gen_random_uuid(), 'member', $1) RETURNING id`,
        [PROJECT],
      );
      const role = rows[0]?.id;
      const link = (users: string[]) =>
        client.query('INSERT INTO user_roles (user_id, role_id) SELECT unnest($1::uuid[]), $2', [
          users,
          role,
        ]);
      // The connection's first capture: a table of one user.
      await link(await addUsers(client, 1));
      const many = await addUsers(client, 20_000);
      plans.length = 0;
      await link(many.slice(0, 20));
      const capture = plans.find((p) => /INSERT INTO user_change_log[\s\S]*FROM users u/.test(p));
      expect(capture, 'the capture of the linked users ran').to.be.a('string');
      expect(capture).to.match(/Index (Only )?Scan (using|on) users_pkey/);
      expect(capture).not.to.match(/Seq Scan on users/);
      const { rows: captured } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM user_change_log
          WHERE project_id = $1 AND user_id = ANY($2::uuid[]) AND kind = 'updated'`,
        [PROJECT, many.slice(0, 20)],
      );
      expect(captured[0]?.n).to.equal(20);
    } finally {
      client.release(true); // its session settings (the plans logged) go with it
    }
  });
});
