import { expect } from 'chai';
import { adminClient, idOf, makeTestKeys, testConfig } from '../../support/admin-api.js';
import { useTestSchema } from '../../support/database.js';
import { createUser } from '../../support/users.js';

const QUERY = `query ($key: String!, $value: String!) {
  getUserByLoginID(loginIDKey: $key, loginIDValue: $value) {
    id isDisabled createdAt updatedAt lastLoginAt standardAttributes customAttributes
    formattedName endUserAccountID isAnonymous isAnonymized isDeactivated disableReason
    temporarilyDisabledFrom temporarilyDisabledUntil accountValidFrom accountValidUntil deleteAt anonymizeAt
    verifiedClaims { name value }
    loginIDs { id type claims }
    oauthConnections { id type claims }
    roles { totalCount edges { cursor node { id key name description createdAt updatedAt } } }
    groups { totalCount edges { node { key name } } }
    effectiveRoles { totalCount edges { node { key } } }
  }
}`;

describe('getUserByLoginID', () => {
  const db = useTestSchema();
  let client: ReturnType<typeof adminClient>;
  let config: ReturnType<typeof testConfig>;
  let aliceId: string;

  before(async () => {
    const keys = await makeTestKeys();
    config = testConfig(keys, { custom_attributes: [{ name: 'member_id', type: 'string' }] });
    client = adminClient(config, db, keys);
    aliceId = await createUser(db(), config.project, {
      email: 'Alice@Example.com',
      preferred_username: 'AliceW',
      phone_number: '+14155552671',
      email_verified: true,
      standard: { given_name: 'Alice', family_name: 'Wong', address: { country: 'US' } },
      custom: { member_id: 'M-1' },
      roles: ['admin', 'auditor'],
      groups: ['staff'],
    });
    await createUser(db(), config.project, { email: 'bob@example.com' });
  });

  const lookup = async (key: string, value: string) => client.graphql(QUERY, { key, value });

  it('finds a user by email, ignoring case and surrounding spaces', async () => {
    for (const value of ['alice@example.com', 'ALICE@EXAMPLE.COM', ' Alice@Example.com ']) {
      const res = await lookup('email', value);
      expect(res.errors, value).to.equal(undefined);
      expect(idOf(res, 'getUserByLoginID'), value).to.equal(aliceId);
    }
  });

  it('returns the whole user as the spec shows it', async () => {
    const res = await lookup('email', 'alice@example.com');
    const user = res.data?.getUserByLoginID as Record<string, unknown>;
    expect(user.isDisabled).to.equal(false);
    expect(user.createdAt).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$/);
    const standard = user.standardAttributes as Record<string, unknown>;
    expect(standard).to.deep.include({
      email: 'alice@example.com',
      email_verified: true,
      preferred_username: 'alicew',
      phone_number: '+14155552671',
      phone_number_verified: false,
      given_name: 'Alice',
      family_name: 'Wong',
      address: { country: 'US' },
    });
    expect(standard.updated_at).to.be.a('number');
    expect(standard.updated_at).to.equal(Math.floor(Date.parse(user.updatedAt as string) / 1000));
    expect(user.customAttributes).to.deep.equal({ member_id: 'M-1' });
    const ns = 'https://authgear.com/claims/login_id';
    const loginId = (attribute: string, key: string, value: string, original: string) => ({
      [attribute]: value,
      [`${ns}/key`]: key,
      [`${ns}/original_value`]: original,
      [`${ns}/type`]: key,
      [`${ns}/value`]: value,
    });
    const identities = user.loginIDs as { id: string; type: string; claims: unknown }[];
    expect(identities.map((i) => i.type)).to.deep.equal(['LOGIN_ID', 'LOGIN_ID', 'LOGIN_ID']);
    for (const i of identities) expect(i.id).to.match(/^[0-9a-f-]{36}$/);
    expect(identities.map((i) => i.claims)).to.deep.equal([
      loginId('email', 'email', 'alice@example.com', 'Alice@Example.com'),
      loginId('preferred_username', 'username', 'alicew', 'AliceW'),
      loginId('phone_number', 'phone', '+14155552671', '+14155552671'),
    ]);
    expect(user.oauthConnections).to.deep.equal([]);
    expect(user.verifiedClaims).to.deep.equal([{ name: 'email', value: 'alice@example.com' }]);
    expect(user).to.deep.include({
      lastLoginAt: null,
      formattedName: 'Alice Wong',
      endUserAccountID: 'alice@example.com',
      isAnonymous: false,
      isAnonymized: false,
      isDeactivated: false,
      disableReason: null,
      temporarilyDisabledFrom: null,
      temporarilyDisabledUntil: null,
      accountValidFrom: null,
      accountValidUntil: null,
      deleteAt: null,
      anonymizeAt: null,
    });
    const roles = user.roles as {
      totalCount: number;
      edges: { cursor: string; node: Record<string, unknown> }[];
    };
    expect(roles.totalCount).to.equal(2);
    expect(roles.edges.map((e) => e.node.key)).to.deep.equal(['admin', 'auditor']);
    expect(roles.edges[0]?.node).to.include({ name: null, description: null });
    expect(roles.edges[0]?.node.createdAt).to.match(/^\d{4}-\d\d-\d\dT/);
    expect(user.groups).to.deep.equal({ totalCount: 1, edges: [{ node: { key: 'staff', name: null } }] });
    expect(user.effectiveRoles).to.deep.equal({
      totalCount: 2,
      edges: [{ node: { key: 'admin' } }, { node: { key: 'auditor' } }],
    });
  });

  it('finds a user by username, case-folded', async () => {
    const res = await lookup('username', 'ALICEW');
    expect(idOf(res, 'getUserByLoginID')).to.equal(aliceId);
  });

  it('finds a user by phone in E.164', async () => {
    const res = await lookup('phone', '+14155552671');
    expect(idOf(res, 'getUserByLoginID')).to.equal(aliceId);
  });

  it('returns null when nothing matches', async () => {
    const res = await lookup('email', 'nobody@example.com');
    expect(res.errors).to.equal(undefined);
    expect(res.data).to.deep.equal({ getUserByLoginID: null });
    expect((await lookup('username', 'nobody')).data).to.deep.equal({ getUserByLoginID: null });
    expect((await lookup('phone', '+14155550000')).data).to.deep.equal({ getUserByLoginID: null });
  });

  for (const [key, value, argument] of [
    ['nickname', 'alice', 'loginIDKey'],
    ['preferred_username', 'alice', 'loginIDKey'],
    ['email', 'not-an-email', 'loginIDValue'],
    ['email', 'Alice <alice@example.com>', 'loginIDValue'],
    ['phone', '4155552671', 'loginIDValue'],
    ['phone', '+1 415 555 2671', 'loginIDValue'],
    ['phone', '+999', 'loginIDValue'],
    ['username', '   ', 'loginIDValue'],
  ] as const) {
    it(`rejects ${key}=${JSON.stringify(value)} with GetUsersInvalidArgument on ${argument}`, async () => {
      const res = await lookup(key, value);
      expect(res.status).to.equal(200);
      expect(res.data).to.deep.equal({ getUserByLoginID: null });
      expect(res.errors).to.have.length(1);
      expect(res.errors?.[0]?.path).to.deep.equal(['getUserByLoginID']);
      expect(res.errors?.[0]?.extensions).to.deep.equal({
        errorName: 'Invalid',
        reason: 'GetUsersInvalidArgument',
        info: { argument },
      });
    });
  }

  it('does not find an email that only an OAuth connection carries', async () => {
    await createUser(db(), config.project, {
      oauth: [
        { alias: 'google', type: 'google', subjectId: 'g-only', claims: { email: 'oauth-only@example.com' } },
      ],
    });
    const res = await lookup('email', 'oauth-only@example.com');
    expect(res.data).to.deep.equal({ getUserByLoginID: null });
  });

  it('is immediately consistent: a user inserted one statement earlier is found', async () => {
    const id = await createUser(db(), config.project, { email: 'fresh@example.com' });
    const res = await lookup('email', 'fresh@example.com');
    expect(idOf(res, 'getUserByLoginID')).to.equal(id);
  });

  it('only accepts the login id keys the project configures', async () => {
    const keys = await makeTestKeys();
    const emailOnly = testConfig(keys, { login_id_keys: [{ key: 'email' }] });
    const res = await adminClient(emailOnly, db, keys).graphql(QUERY, { key: 'username', value: 'alicew' });
    expect(res.errors?.[0]?.extensions).to.deep.include({ reason: 'GetUsersInvalidArgument' });
  });
});

describe('getUserByLoginID with case-sensitive login ids', () => {
  const db = useTestSchema();

  it('matches email and username only with the same case', async () => {
    const keys = await makeTestKeys();
    const config = testConfig(keys, {
      login_id_keys: [
        { key: 'email', case_sensitive: true },
        { key: 'username', case_sensitive: true },
      ],
    });
    const client = adminClient(config, db, keys);
    const id = await createUser(db(), config.project, {
      email: 'Carol@Example.com',
      preferred_username: 'CarolX',
    });
    const find = async (key: string, value: string) =>
      ((await client.graphql(QUERY, { key, value })).data?.getUserByLoginID as { id: string } | null)?.id ??
      null;
    expect(await find('email', 'Carol@Example.com')).to.equal(id);
    expect(await find('email', 'carol@example.com')).to.equal(null);
    expect(await find('username', 'CarolX')).to.equal(id);
    expect(await find('username', 'carolx')).to.equal(null);
  });
});
