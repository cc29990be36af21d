import { expect } from 'chai';
import { createPool } from '../../../pipeline/db/pool.js';
import { adminClient, adminToken, makeTestKeys, type TestKeys, testConfig } from '../../support/admin-api.js';
import { testDatabaseUrl, useTestSchema } from '../../support/database.js';

describe('GraphQL transport at /_api/admin/graphql', () => {
  const db = useTestSchema();
  let keys: TestKeys;
  let client: ReturnType<typeof adminClient>;

  before(async () => {
    keys = await makeTestKeys();
    client = adminClient(testConfig(keys), db, keys);
  });

  it('answers GET with the query in the URL', async () => {
    const query = encodeURIComponent(
      '{ getUserByLoginID(loginIDKey: "email", loginIDValue: "x@example.com") { id } }',
    );
    const res = await client.request({
      method: 'GET',
      url: `/_api/admin/graphql?query=${query}`,
      token: await adminToken(keys),
    });
    expect(res.statusCode).to.equal(200);
    expect(JSON.parse(res.body)).to.deep.equal({ data: { getUserByLoginID: null } });
  });

  it('refuses a mutation over GET', async () => {
    const query = encodeURIComponent('mutation { createRole(input: { key: "via_get" }) { role { id } } }');
    const res = await client.request({
      method: 'GET',
      url: `/_api/admin/graphql?query=${query}`,
      token: await adminToken(keys),
    });
    expect(res.statusCode).to.equal(405);
    const { rows } = await db().query(`SELECT 1 FROM roles WHERE key = 'via_get'`);
    expect(rows).to.have.length(0);
  });

  it('refuses a body that is not valid JSON with the error envelope', async () => {
    const res = await client.request({
      method: 'POST',
      url: '/_api/admin/graphql',
      token: await adminToken(keys),
      body: '{"query": ',
    });
    expect(res.statusCode).to.equal(400);
    expect(JSON.parse(res.body)).to.deep.equal({
      error: { name: 'Invalid', reason: 'BadRequest', message: 'request body is not valid JSON', code: 400 },
    });
  });

  it('reports a GraphQL syntax error without a stack', async () => {
    const res = await client.graphql('{ getUserByLoginID(');
    // graphql-over-HTTP answers 200 to a client that accepts only application/json.
    expect(res.status).to.equal(200);
    expect(res.errors?.[0]?.message).to.match(/Syntax Error/);
    expect(JSON.stringify(res.errors)).not.to.match(/at .*\.ts:\d+/);
  });

  it('masks a database failure as InternalError without SQL text', async () => {
    // A real pool whose search_path names no schema: every lookup meets a real Postgres error.
    const failing = createPool({ connectionString: testDatabaseUrl(), schema: 'no_such_schema', max: 1 });
    const broken = adminClient(testConfig(keys), () => failing, keys);
    const res = await broken
      .graphql('{ getUserByLoginID(loginIDKey: "email", loginIDValue: "x@example.com") { id } }')
      .finally(() => failing.end());
    expect(res.errors?.[0]?.message).to.equal('unexpected error');
    expect(res.errors?.[0]?.extensions).to.deep.equal({
      errorName: 'InternalError',
      reason: 'UnexpectedError',
    });
    expect(JSON.stringify(res)).not.to.include('SELECT');
  });

  it('answers an unknown path with 404', async () => {
    const res = await client.request({ method: 'GET', url: '/nowhere', token: await adminToken(keys) });
    expect(res.statusCode).to.equal(404);
  });
});
