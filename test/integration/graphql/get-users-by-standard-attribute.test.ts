import { expect } from 'chai';
import { adminClient, makeTestKeys, testConfig } from '../../support/admin-api.js';
import { useTestSchema } from '../../support/database.js';
import { createUser } from '../../support/users.js';

const QUERY = `query ($name: String!, $value: String!) {
  getUsersByStandardAttribute(attributeName: $name, attributeValue: $value) { id }
}`;

describe('getUsersByStandardAttribute', () => {
  const db = useTestSchema();
  let client: ReturnType<typeof adminClient>;
  let config: ReturnType<typeof testConfig>;
  let loginUser: string;
  let oauthUser: string;
  let bothUser: string;

  before(async () => {
    const keys = await makeTestKeys();
    config = testConfig(keys);
    client = adminClient(config, db, keys);
    loginUser = await createUser(db(), config.project, {
      email: 'Shared@Example.com',
      preferred_username: 'dave',
      phone_number: '+447911123456',
      createdAt: '2026-01-01T00:00:00Z',
    });
    oauthUser = await createUser(db(), config.project, {
      createdAt: '2026-01-02T00:00:00Z',
      oauth: [
        {
          alias: 'github',
          type: 'github',
          subjectId: '4242',
          claims: { email: 'SHARED@example.com', preferred_username: 'Octo', phone_number: '+819012345678' },
        },
      ],
    });
    // A user whose login id and OAuth connection carry the same email is listed once.
    bothUser = await createUser(db(), config.project, {
      email: 'both@example.com',
      createdAt: '2026-01-03T00:00:00Z',
      oauth: [
        { alias: 'google', type: 'google', subjectId: 'g-both', claims: { email: 'Both@Example.com' } },
      ],
    });
  });

  const ids = async (name: string, value: string) => {
    const res = await client.graphql(QUERY, { name, value });
    expect(res.errors, JSON.stringify(res.errors)).to.equal(undefined);
    const users = (res.data?.getUsersByStandardAttribute ?? []) as { id: string }[];
    return users.map((u) => u.id);
  };

  it('finds users by email from login ids and OAuth claims, in creation order, case-folded', async () => {
    expect(await ids('email', 'shared@example.com')).to.deep.equal([loginUser, oauthUser]);
    expect(await ids('email', 'SHARED@EXAMPLE.COM')).to.deep.equal([loginUser, oauthUser]);
  });

  it('lists a user once when two of its identities match', async () => {
    expect(await ids('email', 'both@example.com')).to.deep.equal([bothUser]);
  });

  it('finds users by preferred_username', async () => {
    expect(await ids('preferred_username', 'DAVE')).to.deep.equal([loginUser]);
    expect(await ids('preferred_username', 'octo')).to.deep.equal([oauthUser]);
  });

  it('finds users by phone_number in E.164', async () => {
    expect(await ids('phone_number', '+447911123456')).to.deep.equal([loginUser]);
    expect(await ids('phone_number', '+819012345678')).to.deep.equal([oauthUser]);
  });

  it('returns [] when nothing matches', async () => {
    expect(await ids('email', 'nobody@example.com')).to.deep.equal([]);
    expect(await ids('preferred_username', 'nobody')).to.deep.equal([]);
    expect(await ids('phone_number', '+14155550000')).to.deep.equal([]);
  });

  it('matches exactly, never partially', async () => {
    expect(await ids('email', 'hared@example.com')).to.deep.equal([]);
    expect(await ids('preferred_username', 'dav')).to.deep.equal([]);
  });

  for (const [name, value, argument] of [
    ['name', 'Dave', 'attributeName'],
    ['username', 'dave', 'attributeName'],
    ['given_name', 'Dave', 'attributeName'],
    ['email', 'dave', 'attributeValue'],
    ['phone_number', '07911 123456', 'attributeValue'],
    ['preferred_username', '', 'attributeValue'],
  ] as const) {
    it(`rejects ${name}=${JSON.stringify(value)}: data null, GetUsersInvalidArgument on ${argument}`, async () => {
      const res = await client.graphql(QUERY, { name, value });
      expect(res.status).to.equal(200);
      expect(res.data).to.equal(null);
      expect(res.errors).to.have.length(1);
      expect(res.errors?.[0]?.extensions).to.deep.equal({
        errorName: 'Invalid',
        reason: 'GetUsersInvalidArgument',
        info: { argument },
      });
    });
  }

  it('is immediately consistent after a write', async () => {
    const id = await createUser(db(), config.project, { email: 'new@example.com' });
    expect(await ids('email', 'new@example.com')).to.deep.equal([id]);
  });
});
