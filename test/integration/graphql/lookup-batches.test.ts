import { expect } from 'chai';
import { userLookups } from '../../../api/graphql/lookup-batches.js';
import type { Queryable } from '../../../pipeline/db/pool.js';
import { makeTestKeys, testConfig } from '../../support/admin-api.js';
import { useTestSchema } from '../../support/database.js';
import { createUser } from '../../support/users.js';

describe('lookups made in the same turn of the event loop', () => {
  const db = useTestSchema();
  const ids: Record<string, string> = {};
  let statements: number;
  // The real pool, counting what reaches it.
  const counted = (): Queryable => ({
    query: ((...args: Parameters<Queryable['query']>) => {
      statements += 1;
      return db().query(...args);
    }) as Queryable['query'],
  });

  before(async () => {
    const { project } = testConfig(await makeTestKeys());
    ids.ann = await createUser(db(), project, {
      email: 'ann@example.com',
      preferred_username: 'ann',
      oauth: [
        { alias: 'google', type: 'google', subjectId: 'g-ann', claims: { email: 'shared@example.com' } },
      ],
      createdAt: '2024-01-01T00:00:00Z',
    });
    ids.ben = await createUser(db(), project, {
      email: 'shared@example.com',
      phone_number: '+14155550100',
      oauth: [{ alias: 'google', type: 'google', subjectId: 'g-ben' }],
      createdAt: '2024-01-02T00:00:00Z',
    });
  });

  beforeEach(() => {
    statements = 0;
  });

  it('answers each login id lookup with its own user, in one statement', async () => {
    const lookups = userLookups(counted())('default');
    const found = await Promise.all([
      lookups.byLoginId({ key: 'email', value: 'ben@example.com' }),
      lookups.byLoginId({ key: 'email', value: 'shared@example.com' }),
      lookups.byLoginId({ key: 'username', value: 'ann' }),
      lookups.byLoginId({ key: 'email', value: 'ann@example.com' }),
      lookups.byLoginId({ key: 'email', value: 'shared@example.com' }),
    ]);
    expect(found.map((u) => u?.id)).to.deep.equal([undefined, ids.ben, ids.ann, ids.ann, ids.ben]);
    expect(statements).to.equal(1);
  });

  it('answers each OAuth lookup with its own user, in one statement', async () => {
    const lookups = userLookups(counted())('default');
    const found = await Promise.all([
      lookups.byOAuth({ providerAlias: 'google', subjectId: 'g-ben' }),
      lookups.byOAuth({ providerAlias: 'facebook', subjectId: 'g-ben' }),
      lookups.byOAuth({ providerAlias: 'google', subjectId: 'g-ann' }),
    ]);
    expect(found.map((u) => u?.id)).to.deep.equal([ids.ben, undefined, ids.ann]);
    expect(statements).to.equal(1);
  });

  it('answers each attribute lookup with its own users in creation order, one statement per attribute', async () => {
    const lookups = userLookups(counted())('default');
    const [shared, nobody, phone, ann] = await Promise.all([
      lookups.byStandardAttribute('email', 'shared@example.com'),
      lookups.byStandardAttribute('email', 'nobody@example.com'),
      lookups.byStandardAttribute('phone_number', '+14155550100'),
      lookups.byStandardAttribute('email', 'ann@example.com'),
    ]);
    // Ann carries shared@example.com through her OAuth claims, Ben as his login id.
    expect(shared?.map((u) => u.id)).to.deep.equal([ids.ann, ids.ben]);
    expect(nobody).to.deep.equal([]);
    expect(phone?.map((u) => u.id)).to.deep.equal([ids.ben]);
    expect(ann?.map((u) => u.id)).to.deep.equal([ids.ann]);
    expect(statements).to.equal(2);
  });

  it('reads the database for every lookup: a user stored between two lookups is found by the second', async () => {
    const lookups = userLookups(counted())('default');
    expect(await lookups.byLoginId({ key: 'email', value: 'cy@example.com' })).to.equal(undefined);
    const { project } = testConfig(await makeTestKeys());
    const cy = await createUser(db(), project, { email: 'cy@example.com' });
    expect((await lookups.byLoginId({ key: 'email', value: 'cy@example.com' }))?.id).to.equal(cy);
    expect(statements).to.equal(2);
  });

  it('answers lookups of two projects made in the same turn, each in its own project', async () => {
    const { project } = testConfig(await makeTestKeys());
    const other = await createUser(db(), { ...project, id: 'lookup-other' }, { email: 'ann@example.com' });
    const lookupsOf = userLookups(counted());
    const wanted = { key: 'email', value: 'ann@example.com' };
    const found = await Promise.all([
      lookupsOf('default').byLoginId(wanted),
      lookupsOf('lookup-other').byLoginId(wanted),
      lookupsOf('default').byStandardAttribute('email', 'ann@example.com'),
      lookupsOf('lookup-other').byStandardAttribute('email', 'ann@example.com'),
    ]);
    expect(found.map((u) => (Array.isArray(u) ? u.map((one) => one.id) : u?.id))).to.deep.equal([
      ids.ann,
      other,
      [ids.ann],
      [other],
    ]);
    expect(statements, 'one statement per project and lookup').to.equal(4);
  });
});
