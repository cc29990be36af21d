import { expect } from 'chai';
import { configFromDocument } from '../../../pipeline/config.js';
import { download, useExportService } from '../../support/exports.js';
import { HTTPS } from '../../support/imports.js';
import { taskEndpoints } from '../../support/task-endpoints.js';
import { createUser, type FixtureUser } from '../../support/users.js';

// Two projects' users in one database, alike in every key a lookup or an import matches on: the
// service of project alpha sees, matches, exports and lists only alpha's.

const ALIKE: FixtureUser = {
  email: 'same@tenancy.test',
  preferred_username: 'same',
  phone_number: '+14155550100',
  standard: { name: 'Same Name' },
  roles: ['staff'],
  oauth: [{ alias: 'google', type: 'google', subjectId: 'g-same' }],
};

describe('projects in one database: a project sees only its own users', function () {
  this.timeout(60_000);
  const service = useExportService('postgres', { project: { id: 'alpha' }, settings: { trust_proxy: true } });
  const imports = taskEndpoints('/_api/admin/users/import', service.client, service.keys, HTTPS);
  const beta = configFromDocument({ project: { id: 'beta' } }).project;
  let alphaId = '';
  let betaId = '';
  let betaOnlyId = '';

  before(async () => {
    betaId = await createUser(service.db(), beta, { ...ALIKE, roles: ['staff', 'beta_only'] });
    alphaId = await createUser(service.db(), service.config().project, ALIKE);
    betaOnlyId = await createUser(service.db(), beta, {
      email: 'only-beta@tenancy.test',
      standard: { name: 'Beta' },
    });
  });

  it('answers the three lookups, node() and users(searchKeyword) with its own user only', async () => {
    const { data } = await service.client().graphql(
      `query ($other: ID!) {
        byLogin: getUserByLoginID(loginIDKey: "email", loginIDValue: "same@tenancy.test") { id }
        byPhone: getUsersByStandardAttribute(attributeName: "phone_number", attributeValue: "+14155550100") { id }
        byOAuth: getUserByOAuth(oauthProviderAlias: "google", oauthProviderUserID: "g-same") { id }
        other: node(id: $other) { id }
        search: users(searchKeyword: "same") { totalCount edges { node { id } } }
      }`,
      { other: betaId },
    );
    expect(data).to.deep.equal({
      byLogin: { id: alphaId },
      byPhone: [{ id: alphaId }],
      byOAuth: { id: alphaId },
      other: null,
      search: { totalCount: 1, edges: [{ node: { id: alphaId } }] },
    });
  });

  it("imports against its own users and roles: another project's login ids and role keys are not its", async () => {
    const status = await imports.run({
      identifier: 'email',
      upsert: true,
      records: [
        { email: 'same@tenancy.test', name: 'Alpha Again' },
        { email: 'new@tenancy.test', preferred_username: 'same', roles: ['staff'] },
        { email: 'other@tenancy.test', roles: ['beta_only'] },
        { email: 'only-beta@tenancy.test', name: 'Alpha' },
      ],
    });
    const details = status.details as { outcome: string; user_id?: string; errors?: { reason: string }[] }[];
    // The email only beta's user has is a new user of alpha's, never an update of beta's.
    expect(details.map((d) => d.outcome)).to.deep.equal(['updated', 'failed', 'failed', 'inserted']);
    expect(details[3]?.user_id).not.to.equal(betaOnlyId);
    expect(details[0]?.user_id).to.equal(alphaId);
    // "same" is alpha's own user's username: taken within alpha, whatever beta holds.
    expect(details[1]?.errors?.map((e) => e.reason)).to.deep.equal(['DuplicatedIdentity']);
    expect(details[2]?.errors?.map((e) => e.reason)).to.deep.equal(['RoleUnknownKeys']);
    const { rows } = await service
      .db()
      .query(
        `SELECT project_id, standard_attributes->>'name' AS name FROM users WHERE id = ANY($1) ORDER BY project_id, name`,
        [[alphaId, betaId]],
      );
    expect(rows).to.deep.equal([
      { project_id: 'alpha', name: 'Alpha Again' },
      { project_id: 'beta', name: 'Same Name' },
    ]);
  });

  it('exports its own users only, and makes a role key another project holds as its own', async () => {
    const status = await service.run({ format: 'ndjson' });
    const file = await download(status.download_url as string);
    const subs = file.text
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { sub: string }).sub);
    const { rows } = await service
      .db()
      .query<{ id: string }>(`SELECT id FROM users WHERE project_id = 'alpha' ORDER BY created_at, id`);
    expect(rows.map((r) => r.id))
      .to.include(alphaId)
      .and.not.include(betaId);
    expect(subs).to.deep.equal(rows.map((r) => r.id));
    const created = await service
      .client()
      .graphql('mutation { createRole(input: { key: "beta_only" }) { role { key } } }');
    expect(created.errors, 'beta holds the key, alpha does not').to.equal(undefined);
  });
});
