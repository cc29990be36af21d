import { expect } from 'chai';
import { adminClient, adminToken, makeTestKeys, type TestKeys, testConfig } from '../../support/admin-api.js';
import { useTestSchema } from '../../support/database.js';

/** What the facade serves for the console besides its files: the project's settings, the development sign-in. */
describe('console routes', () => {
  const db = useTestSchema();
  let keys: TestKeys;
  before(async () => {
    keys = await makeTestKeys();
  });
  const client = () =>
    adminClient(
      testConfig(keys, {
        custom_attributes: [
          { name: 'tier', type: 'string' },
          { name: 'score', type: 'number' },
        ],
      }),
      db,
      keys,
    );

  it("answers the project's declared custom attributes to an admin, and nobody else", async () => {
    const res = await client().request({
      method: 'GET',
      url: '/console/project.json',
      token: await adminToken(keys),
    });
    expect(res.statusCode, res.body).to.equal(200);
    expect(JSON.parse(res.body)).to.deep.equal({
      custom_attributes: [
        { name: 'tier', type: 'string' },
        { name: 'score', type: 'number' },
      ],
    });
    const anonymous = await client().request({ method: 'GET', url: '/console/project.json' });
    expect(anonymous.statusCode).to.equal(403);
  });

  it('has no development sign-in where the project names its admin keys', async () => {
    const res = await client().request({ method: 'POST', url: '/console/development-token' });
    expect(res.statusCode).to.equal(404);
    expect(JSON.parse(res.body)).to.have.nested.property('error.reason', 'NotFound');
    expect(res.body).not.to.match(/eyJ/);
  });
});
