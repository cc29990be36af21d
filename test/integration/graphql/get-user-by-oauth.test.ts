import { expect } from 'chai';
import { adminClient, idOf, makeTestKeys, testConfig } from '../../support/admin-api.js';
import { useTestSchema } from '../../support/database.js';
import { createUser } from '../../support/users.js';

const QUERY = `query ($alias: String!, $subject: String!) {
  getUserByOAuth(oauthProviderAlias: $alias, oauthProviderUserID: $subject) {
    id oauthConnections { id type claims createdAt updatedAt }
  }
}`;

describe('getUserByOAuth', () => {
  const db = useTestSchema();
  let client: ReturnType<typeof adminClient>;
  let config: ReturnType<typeof testConfig>;
  let userId: string;

  before(async () => {
    const keys = await makeTestKeys();
    config = testConfig(keys, {
      claims_namespace: 'https://example.com/claims',
      oauth_providers: [
        { alias: 'google', type: 'google' },
        { alias: 'company-sso', type: 'azureadv2' },
      ],
    });
    client = adminClient(config, db, keys);
    userId = await createUser(db(), config.project, {
      email: 'erin@example.com',
      oauth: [
        {
          alias: 'google',
          type: 'google',
          subjectId: '1098765',
          claims: { email: 'erin@gmail.com', given_name: 'Erin', family_name: 'Lee', name: 'Erin Lee' },
        },
      ],
    });
    await createUser(db(), config.project, {
      oauth: [{ alias: 'company-sso', type: 'azureadv2', subjectId: '1098765' }],
    });
  });

  const lookup = (alias: string, subject: string) => client.graphql(QUERY, { alias, subject });

  it('finds the user by provider alias and subject id, with the claims of decisions 2.5', async () => {
    const res = await lookup('google', '1098765');
    expect(res.errors).to.equal(undefined);
    expect(idOf(res, 'getUserByOAuth')).to.equal(userId);
    const user = res.data?.getUserByOAuth as { oauthConnections: Record<string, unknown>[] };
    const [connection] = user.oauthConnections;
    expect(connection?.id).to.match(/^[0-9a-f-]{36}$/);
    expect(connection?.createdAt).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$/);
    expect(user.oauthConnections).to.deep.equal([
      {
        id: connection?.id,
        type: 'OAUTH',
        createdAt: connection?.createdAt,
        updatedAt: connection?.updatedAt,
        claims: {
          email: 'erin@gmail.com',
          given_name: 'Erin',
          family_name: 'Lee',
          name: 'Erin Lee',
          'https://example.com/claims/oauth/profile': {
            id: '1098765',
            email: 'erin@gmail.com',
            given_name: 'Erin',
            family_name: 'Lee',
            name: 'Erin Lee',
          },
          'https://example.com/claims/oauth/provider_alias': 'google',
          'https://example.com/claims/oauth/provider_type': 'google',
          'https://example.com/claims/oauth/subject_id': '1098765',
        },
      },
    ]);
  });

  it('tells providers apart by alias for the same subject id', async () => {
    const other = idOf(await lookup('company-sso', '1098765'), 'getUserByOAuth');
    expect(other).to.be.a('string').and.not.equal(userId);
  });

  it('matches the subject id exactly', async () => {
    expect((await lookup('google', '109876')).data).to.deep.equal({ getUserByOAuth: null });
    expect((await lookup('google', ' 1098765')).data).to.deep.equal({ getUserByOAuth: null });
  });

  it('returns null for an unknown subject id', async () => {
    const res = await lookup('google', 'nobody');
    expect(res.errors).to.equal(undefined);
    expect(res.data).to.deep.equal({ getUserByOAuth: null });
  });

  it('rejects an alias the project does not configure, even a default one', async () => {
    for (const alias of ['github', 'Google', 'unknown']) {
      const res = await lookup(alias, '1098765');
      expect(res.data, alias).to.deep.equal({ getUserByOAuth: null });
      expect(res.errors?.[0]?.extensions, alias).to.deep.equal({
        errorName: 'Invalid',
        reason: 'GetUsersInvalidArgument',
        info: { argument: 'oauthProviderAlias' },
      });
    }
  });

  it('rejects an empty subject id', async () => {
    const res = await lookup('google', '');
    expect(res.errors?.[0]?.extensions).to.deep.include({ reason: 'GetUsersInvalidArgument' });
  });

  it('knows the four default aliases when none are configured', async () => {
    const keys = await makeTestKeys();
    const defaults = adminClient(testConfig(keys), db, keys);
    for (const alias of ['google', 'facebook', 'github', 'apple']) {
      const res = await defaults.graphql(QUERY, { alias, subject: 'x' });
      expect(res.errors, alias).to.equal(undefined);
    }
    const res = await defaults.graphql(QUERY, { alias: 'company-sso', subject: 'x' });
    expect(res.errors?.[0]?.extensions).to.deep.include({ reason: 'GetUsersInvalidArgument' });
  });
});
