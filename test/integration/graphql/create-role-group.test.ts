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
    const mutation = `mutation ($key: String!, $name: String) { ${field}(key: $key, name: $name) { id key name } }`;

    it(`${field} stores the key and name and returns them with an id`, async () => {
      const res = await client.graphql(mutation, { key: 'billing:admin', name: 'Billing admins' });
      expect(res.errors).to.equal(undefined);
      const created = res.data?.[field] as { id: string; key: string; name: string };
      expect(created.id).to.match(/^[0-9a-f-]{36}$/);
      expect(created).to.deep.include({ key: 'billing:admin', name: 'Billing admins' });
      const table = field === 'createRole' ? 'roles' : 'groups';
      const { rows } = await db().query(`SELECT key, name FROM ${table} WHERE id = $1`, [created.id]);
      expect(rows).to.deep.equal([{ key: 'billing:admin', name: 'Billing admins' }]);
    });

    it(`${field} accepts a missing name`, async () => {
      const res = await client.graphql(mutation, { key: 'no_name' });
      expect(res.data?.[field]).to.deep.include({ key: 'no_name', name: null });
    });

    it(`${field} refuses a taken key with ${reason}`, async () => {
      await client.graphql(mutation, { key: 'dup' });
      const res = await client.graphql(mutation, { key: 'dup' });
      expect(res.data).to.equal(null);
      expect(res.errors?.[0]?.extensions).to.deep.equal({
        errorName: 'Invalid',
        reason,
        info: { key: 'dup' },
      });
    });

    it(`${field} refuses a malformed key with ValidationFailed`, async () => {
      for (const key of ['', '1abc', 'has space', 'x'.repeat(41)]) {
        const res = await client.graphql(mutation, { key });
        expect(res.errors?.[0]?.extensions, key).to.deep.include({
          errorName: 'Invalid',
          reason: 'ValidationFailed',
        });
      }
    });
  }
});
