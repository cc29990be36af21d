import { expect } from 'chai';
import { adminClient, makeTestKeys, testConfig } from '../../support/admin-api.js';
import { useTestSchema } from '../../support/database.js';
import { createUser } from '../../support/users.js';

const NODES = `query ($ids: [ID!]!) {
  nodes(ids: $ids) {
    __typename id
    ... on User { standardAttributes }
    ... on Role { key description }
    ... on Group { key name }
  }
}`;

describe('node(id:) and nodes(ids:)', () => {
  const db = useTestSchema();
  let client: ReturnType<typeof adminClient>;
  let userId: string;
  let roleId: string;
  let groupId: string;

  before(async () => {
    const keys = await makeTestKeys();
    const config = testConfig(keys);
    client = adminClient(config, db, keys);
    const role = await client.graphql(
      'mutation { createRole(input: { key: "ops", description: "On call" }) { role { id } } }',
    );
    roleId = (role.data as { createRole: { role: { id: string } } }).createRole.role.id;
    const group = await client.graphql(
      'mutation { createGroup(input: { key: "eu", name: "Europe" }) { group { id } } }',
    );
    groupId = (group.data as { createGroup: { group: { id: string } } }).createGroup.group.id;
    userId = await createUser(db(), config.project, { email: 'node@example.com' });
  });

  it('answers users, roles and groups by the ids the service hands out, and null for any other id', async () => {
    const res = await client.graphql(NODES, {
      ids: [
        userId,
        roleId,
        groupId,
        '00000000-0000-4000-8000-000000000000',
        'not-a-uuid',
        userId.toUpperCase(),
      ],
    });
    expect(res.errors).to.equal(undefined);
    const nodes = res.data?.nodes as Record<string, unknown>[];
    expect(nodes[0]).to.deep.include({ __typename: 'User', id: userId });
    expect(nodes[0]?.standardAttributes).to.deep.include({ email: 'node@example.com' });
    expect(nodes[1]).to.deep.equal({ __typename: 'Role', id: roleId, key: 'ops', description: 'On call' });
    expect(nodes[2]).to.deep.equal({ __typename: 'Group', id: groupId, key: 'eu', name: 'Europe' });
    expect(nodes.slice(3, 5)).to.deep.equal([null, null]);
    expect(nodes[5]).to.deep.include({ __typename: 'User', id: userId });
  });

  it('node(id:) answers one', async () => {
    const res = await client.graphql('query ($id: ID!) { node(id: $id) { __typename id } }', { id: roleId });
    expect(res.data).to.deep.equal({ node: { __typename: 'Role', id: roleId } });
    const none = await client.graphql('query ($id: ID!) { node(id: $id) { id } }', { id: 'nope' });
    expect(none.data).to.deep.equal({ node: null });
  });
});
