import { expect } from 'chai';
import { NO_USER } from '../../../pipeline/changes/changes-cursor.js';
import { type ChangeScope, readChangeRows } from '../../../pipeline/db/user-change-log.js';
import { useTestSchema } from '../../support/database.js';

// A publisher reads the log's rows of the projects it publishes only: the webhooks' publication
// of a deployment where no endpoint takes user events reads none.

describe('change log read by scope', function () {
  this.timeout(60_000);
  const db = useTestSchema();

  /** A user of `project`, created in a transaction of its own. */
  const insert = async (project: string) =>
    (
      await db().query<{ id: string }>(
        `INSERT INTO users (id, project_id, standard_attributes, custom_attributes)
         VALUES (gen_random_uuid(), $1, '{}', '{}') RETURNING id`,
        [project],
      )
    ).rows[0]?.id as string;

  const read = (scope: ChangeScope) => readChangeRows(db(), scope, { txid: '0', userId: NO_USER }, 100);

  it("reads one project's rows, a list's, every project's, or none for an empty list", async () => {
    const users = {
      a: await insert('scope-a'),
      b: await insert('scope-b'),
      c: await insert('scope-c'),
    };
    const ids = async (scope: ChangeScope) => (await read(scope)).rows.map((r) => r.user_id);

    expect(await ids(undefined)).to.have.members([users.a, users.b, users.c]);
    expect(await ids('scope-b')).to.deep.equal([users.b]);
    expect(await ids(['scope-a', 'scope-c'])).to.deep.equal([users.a, users.c]);

    const none = await read([]);
    expect(none.rows).to.deep.equal([]);
    // The read still names the watermark, past every row it left out: the publisher moves on.
    const last = (await read(undefined)).rows.at(-1)?.txid as string;
    expect(BigInt(none.watermark) > BigInt(last)).to.equal(true);
  });
});
