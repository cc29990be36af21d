import { expect } from 'chai';
import { useImportService } from '../../support/imports.js';
import { useWorkerProcesses } from '../../support/worker-process.js';

const USERS = 500;
/** A valid number of series 1, 2 or 3 (exchange 555, 666 or 777). */
const phone = (series: number, i: number) =>
  `+1415${String(series + 4).repeat(3)}${String(i).padStart(4, '0')}`;

/**
 * Two upsert imports of the same users, each run by its own worker process at the same time, end
 * as if one had run after the other: each batch reads the users it updates only once it holds
 * their locks, so it never writes its changes against a state the other has replaced.
 */
describe('concurrent upserts of the same users (two worker processes)', function () {
  this.timeout(180_000);
  const service = useImportService('postgres', {}, { import_batch_size: 50 }, { workers: false });
  const spawnWorker = useWorkerProcesses(service.db.schema);

  before(async () => {
    for (const key of ['r1', 'r2', 'r3'])
      await service.client().graphql(`mutation { createRole(input: { key: "${key}" }) { role { id } } }`);
  });

  it('leaves each user with one phone login id and the roles of one import, never a mix', async () => {
    const emails = Array.from({ length: USERS }, (_, i) => `same${i}@example.com`);
    const workers = [spawnWorker({}), spawnWorker({})];
    try {
      const first = await service.run({
        identifier: 'email',
        records: emails.map((email, i) => ({ email, phone_number: phone(1, i), roles: ['r1'] })),
      });
      expect(first.summary).to.deep.include({ inserted: USERS });

      const upsert = (series: number, roles: string[]) =>
        service.post({
          upsert: true,
          identifier: 'email',
          records: emails.map((email, i) => ({ email, phone_number: phone(series, i), roles })),
        });
      const started = await Promise.all([upsert(2, ['r2']), upsert(3, ['r3', 'r1'])]);
      const ids = started.map((res) => (JSON.parse(res.body) as { id: string }).id);
      const done = await Promise.all(ids.map((id) => service.waitForCompletion(id)));
      for (const status of done) expect(status.summary).to.deep.include({ updated: USERS, failed: 0 });
    } finally {
      for (const w of workers) w.kill('SIGTERM');
    }

    const { rows } = await service.db().query<{
      email: string;
      phones: string[];
      roles: string[];
      standard_phone: string;
    }>(
      `SELECT u.standard_attributes->>'email' AS email,
              (SELECT array_agg(i.login_id ORDER BY i.login_id) FROM identities i
                WHERE i.user_id = u.id AND i.type = 'login_id' AND i.login_id_key = 'phone') AS phones,
              (SELECT array_agg(r.key ORDER BY r.key) FROM user_roles ur JOIN roles r ON r.id = ur.role_id
                WHERE ur.user_id = u.id) AS roles,
              u.standard_attributes->>'phone_number' AS standard_phone
         FROM users u`,
    );
    expect(rows).to.have.length(USERS);
    const mixed = rows.filter((r) => {
      const i = emails.indexOf(r.email);
      const won = [
        { phones: [phone(2, i)], roles: ['r2'] },
        { phones: [phone(3, i)], roles: ['r1', 'r3'] },
      ];
      const kept = { phones: r.phones, roles: r.roles };
      return r.standard_phone !== r.phones[0] || !won.some((w) => JSON.stringify(w) === JSON.stringify(kept));
    });
    expect(mixed.slice(0, 3), `${mixed.length} users mix the two imports`).to.deep.equal([]);
  });

  it('refuses a second login id of one key for one user, whoever writes it', async () => {
    const { rows } = await service
      .db()
      .query<{ user_id: string }>(
        `SELECT user_id FROM identities WHERE type = 'login_id' AND login_id_key = 'phone' LIMIT 1`,
      );
    const userId = rows[0]?.user_id;
    let caught: { code?: string } | undefined;
    await service
      .db()
      .query(
        `INSERT INTO identities (id, project_id, user_id, type, login_id_key, login_id_type, login_id, original_login_id)
         VALUES (gen_random_uuid(), 'default', $1, 'login_id', 'phone', 'phone', '+14159999999', '+14159999999')`,
        [userId],
      )
      .catch((err: { code?: string }) => {
        caught = err;
      });
    expect(caught?.code).to.equal('23505');
  });
});
