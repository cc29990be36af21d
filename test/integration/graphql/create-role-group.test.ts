import { expect } from 'chai';
import { adminClient, makeTestKeys, testConfig } from '../../support/admin-api.js';
import { useTestSchema } from '../../support/database.js';

describe('createRole and createGroup', () => {
  const db = useTestSchema();
  let client: ReturnType<typeof adminClient>;

  before(async () => {
    const keys = await makeTestKeys();
    client = adminClient(testConfig(keys), db, keys);
  });

  for (const field of ['createRole', 'createGroup'] as const) {
    const reason = field === 'createRole' ? 'RoleDuplicateKey' : 'GroupDuplicateKey';
    const kind = field === 'createRole' ? 'role' : 'group';
    const input = field === 'createRole' ? 'CreateRoleInput' : 'CreateGroupInput';
    const mutation = `mutation ($input: ${input}!) {
      ${field}(input: $input) { ${kind} { id key name description createdAt updatedAt } }
    }`;
    const create = (input: Record<string, unknown>) => client.graphql(mutation, { input });
    const created = (res: Awaited<ReturnType<typeof create>>) =>
      (res.data?.[field] as Record<string, Record<string, unknown>> | undefined)?.[kind];

    it(`${field} stores the key, name and description and returns them in { ${kind} } with an id`, async () => {
      const res = await create({ key: 'billing:admin', name: 'Billing admins', description: 'Pays' });
      expect(res.errors).to.equal(undefined);
      const made = created(res) as Record<string, string>;
      expect(made.id).to.match(/^[0-9a-f-]{36}$/);
      expect(made.createdAt).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$/);
      expect(made).to.deep.include({ key: 'billing:admin', name: 'Billing admins', description: 'Pays' });
      const table = field === 'createRole' ? 'roles' : 'groups';
      const { rows } = await db().query(`SELECT key, name, description FROM ${table} WHERE id = $1`, [
        made.id,
      ]);
      expect(rows).to.deep.equal([{ key: 'billing:admin', name: 'Billing admins', description: 'Pays' }]);
    });

    it(`${field} accepts a missing name and description`, async () => {
      const res = await create({ key: 'no_name' });
      expect(created(res)).to.deep.include({ key: 'no_name', name: null, description: null });
    });

    it(`${field} refuses a taken key with ${reason}`, async () => {
      await create({ key: 'dup' });
      const res = await create({ key: 'dup' });
      expect(res.data).to.equal(null);
      expect(res.errors?.[0]?.extensions).to.deep.equal({
        errorName: 'Invalid',
        reason,
        info: { key: 'dup' },
      });
    });

    it(`${field} refuses a malformed key with ValidationFailed`, async () => {
      for (const key of ['', '1abc', 'has space', 'x'.repeat(41)]) {
        const res = await create({ key });
        expect(res.errors?.[0]?.extensions, key).to.deep.include({
          errorName: 'Invalid',
          reason: 'ValidationFailed',
        });
      }
    });
  }
});
