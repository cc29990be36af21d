import { expect } from 'chai';
import type { Queryable } from '../../../pipeline/db/pool.js';
import { readinessProbe } from '../../../pipeline/operator/health.js';
import { useTestSchema } from '../../support/database.js';

describe('operator/health readiness probe', () => {
  const db = useTestSchema();

  it('asks Postgres once for a flood of probes, and answers part names only', async () => {
    let queries = 0;
    const pool: Queryable = {
      query: ((...args: Parameters<Queryable['query']>) => {
        queries += 1;
        return db().query(...args);
      }) as Queryable['query'],
    };
    const probe = readinessProbe({ pool, blobs: undefined });
    const answers = await Promise.all(Array.from({ length: 200 }, () => probe()));
    expect(queries).to.equal(1);
    for (const answer of answers) expect(answer).to.deep.equal([{ part: 'postgres', ok: true }]);
    await probe();
    expect(queries, 'within the cache window').to.equal(1);
  });

  it("names a worker process's workers: ready only while they claim tasks", async () => {
    let claiming = false;
    const workers = { claiming: () => claiming };
    expect(await readinessProbe({ pool: db(), blobs: undefined, workers })()).to.deep.equal([
      { part: 'postgres', ok: true },
      { part: 'workers', ok: false },
    ]);
    claiming = true;
    expect(await readinessProbe({ pool: db(), blobs: undefined, workers })()).to.deep.include({
      part: 'workers',
      ok: true,
    });
  });
});
