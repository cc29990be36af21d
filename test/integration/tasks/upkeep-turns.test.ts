import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { findAbandonedTaskBlobs, recordTaskBlob } from '../../../pipeline/db/task-blobs.js';
import { completeExport } from '../../../pipeline/db/tasks/endings.js';
import { takeUpkeepTurn } from '../../../pipeline/db/upkeep-jobs.js';
import { newTaskId } from '../../../schemas/task-id.js';
import { useTestSchema } from '../../support/database.js';

describe('upkeep that does not grow with processes or retained tasks', () => {
  const db = useTestSchema();

  it('gives each turn of a sweep to one process of the deployment', async () => {
    const takers = await Promise.all(Array.from({ length: 4 }, () => takeUpkeepTurn(db(), 'retention', 400)));
    expect(takers.filter(Boolean), 'one of four processes at once').to.have.length(1);
    expect(await takeUpkeepTurn(db(), 'retention', 400), 'not again before its turn').to.equal(false);
    expect(await takeUpkeepTurn(db(), 'abandoned-files', 400), 'another sweep has turns of its own').to.equal(
      true,
    );
    await sleep(450);
    expect(await takeUpkeepTurn(db(), 'retention', 400), 'its next turn').to.equal(true);
  });

  it("forgets a completed task's file in the ledger, which keeps only the files of attempts that ended unnamed", async () => {
    const id = newTaskId('export');
    await db().query(
      `INSERT INTO tasks (id, kind, project_id, owner, attempt) VALUES ($1, 'export', 'default', 'w', 2)`,
      [id],
    );
    await recordTaskBlob(db(), id, 'default/first-attempt.csv');
    await recordTaskBlob(db(), id, 'default/second-attempt.csv');
    const named = await completeExport(
      db(),
      { id, attempt: 2, owner: 'w' },
      'default/second-attempt.csv',
      { bytes: 1, sha256: 'x' },
      '100:100:',
    );
    expect(named).to.equal('default/second-attempt.csv');
    const { rows } = await db().query<{ blob_name: string }>('SELECT blob_name FROM task_blobs');
    expect(rows.map((r) => r.blob_name)).to.deep.equal(['default/first-attempt.csv']);
    expect(await findAbandonedTaskBlobs(db(), 10)).to.deep.equal(['default/first-attempt.csv']);
  });
});
