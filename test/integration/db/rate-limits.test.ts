import { expect } from 'chai';
import { giveBackToken, takeToken } from '../../../pipeline/db/rate-limits.js';
import { useTestSchema } from '../../support/database.js';

describe('db/rate-limits: token buckets', () => {
  const db = useTestSchema();
  const tokens = async (name: string) =>
    Number(
      (await db().query<{ tokens: number }>('SELECT tokens FROM rate_limit_buckets WHERE name = $1', [name]))
        .rows[0]?.tokens,
    );

  it('gives a token back up to the count it is told, and never takes any away with a smaller count', async () => {
    const project = { count: 100, periodSeconds: 86_400 };
    await takeToken(db(), 'p/UserExport', project);
    await takeToken(db(), 'p/UserExport', project);
    expect(Math.round(await tokens('p/UserExport'))).to.equal(98);
    // A worker gives back with the deployment's count (24), below the project's own.
    await giveBackToken(db(), 'p/UserExport', { count: 24, periodSeconds: 86_400 });
    expect(Math.round(await tokens('p/UserExport'))).to.equal(98);
    await giveBackToken(db(), 'p/UserExport', project);
    expect(Math.round(await tokens('p/UserExport'))).to.equal(99);
  });
});
