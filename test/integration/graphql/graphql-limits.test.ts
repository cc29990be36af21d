import { expect } from 'chai';
import { GRAPHQL_LIMITS } from '../../../api/graphql/limits.js';
import { MAX_CURSOR_OFFSET, MAX_SEARCH_KEYWORD_LENGTH } from '../../../pipeline/search/user-search.js';
import {
  type AdminClient,
  adminClient,
  adminToken,
  makeTestKeys,
  type TestKeys,
  testConfig,
} from '../../support/admin-api.js';
import { useTestSchema } from '../../support/database.js';
import { createUser } from '../../support/users.js';

/** The limits of README's table, each refused with a 400 that names it before anything runs. */
describe('graphql limits', () => {
  const db = useTestSchema();
  let keys: TestKeys;
  let client: AdminClient;

  before(async () => {
    keys = await makeTestKeys();
    const config = testConfig(keys);
    client = adminClient(config, db, keys);
    await createUser(db(), config.project, { email: 'ann@example.com' });
  });

  /** The raw answer to a POST of `query` with `variables`. */
  async function post(query: string, variables: Record<string, unknown> = {}) {
    const res = await client.request({
      method: 'POST',
      url: '/_api/admin/graphql',
      token: await adminToken(keys),
      body: { query, variables },
    });
    return { status: res.statusCode, body: JSON.parse(res.body) as Record<string, unknown> };
  }

  /** Expects the error envelope of a refused limit. */
  async function refused(query: string, reason: string, limit: number, variables = {}) {
    const res = await post(query, variables);
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    expect(res.body.error).to.deep.include({ name: 'Invalid', reason, code: 400, info: { limit } });
  }

  const usersPage = (first: number) => `users(first: ${first}) { edges { node { id } } }`;

  it('refuses more aliases than the limit: hundreds of users(first: 1000) in one document', async () => {
    const aliases = Array.from({ length: 200 }, (_, i) => `u${i}: ${usersPage(1000)}`).join('\n');
    await refused(`{ ${aliases} }`, 'GraphQLAliasLimitExceeded', GRAPHQL_LIMITS.aliases);
    const few = Array.from({ length: 3 }, (_, i) => `u${i}: ${usersPage(5)}`).join('\n');
    expect((await post(`{ ${few} }`)).status).to.equal(200);
  });

  it('refuses a document nested deeper than the limit', async () => {
    const deep = `${'{ a '.repeat(GRAPHQL_LIMITS.depth + 1)}${'}'.repeat(GRAPHQL_LIMITS.depth + 1)}`;
    await refused(deep, 'GraphQLDepthLimitExceeded', GRAPHQL_LIMITS.depth);
  });

  it('refuses an operation whose cost (first times nesting) passes the limit, variables included', async () => {
    const nested = `{ users(first: 1000) { edges { node { id roles(first: 1000) { edges { node { key } } } } } } }`;
    await refused(nested, 'GraphQLCostLimitExceeded', GRAPHQL_LIMITS.cost);
    const byVariable = `query($n: Int) { users(first: $n) { edges { node { id roles(first: $n) { totalCount } } } } }`;
    await refused(byVariable, 'GraphQLCostLimitExceeded', GRAPHQL_LIMITS.cost, { n: 1000 });
    const res = await post(byVariable, { n: 10 });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.errors).to.equal(undefined);
  });

  it('refuses a document longer than the limit', async () => {
    const padded = `{ ${usersPage(1)} } # ${'x'.repeat(GRAPHQL_LIMITS.documentBytes)}`;
    await refused(padded, 'GraphQLDocumentTooLarge', GRAPHQL_LIMITS.documentBytes);
  });

  it('refuses a searchKeyword past its length and an offset cursor past its cap', async () => {
    const search =
      'query($k: String, $after: String) { users(searchKeyword: $k, after: $after) { totalCount } }';
    const long = await post(search, { k: 'a'.repeat(MAX_SEARCH_KEYWORD_LENGTH + 1) });
    expect(long.body.errors).to.deep.equal([
      {
        message: `searchKeyword is longer than ${MAX_SEARCH_KEYWORD_LENGTH} characters`,
        path: ['users'],
        extensions: {
          errorName: 'Invalid',
          reason: 'SearchKeywordTooLong',
          info: {
            causes: [
              {
                location: '/searchKeyword',
                kind: 'maxLength',
                details: { limit: MAX_SEARCH_KEYWORD_LENGTH },
              },
            ],
          },
        },
      },
    ]);
    const far = Buffer.from('offset:999999999').toString('base64url');
    const deep = await post(search, { after: far });
    expect((deep.body.errors as { extensions: { reason: string } }[])[0]?.extensions.reason).to.equal(
      'CursorOffsetTooLarge',
    );
    const near = Buffer.from(`offset:${MAX_CURSOR_OFFSET}`).toString('base64url');
    expect((await post(search, { after: near })).body.errors).to.equal(undefined);
  });

  it('refuses a body past its byte bound with 413, not by reading it', async () => {
    const res = await post('query($k: String) { users(searchKeyword: $k) { totalCount } }', {
      k: 'a'.repeat(1024 * 1024),
    });
    expect(res.status).to.equal(413);
  });
});
