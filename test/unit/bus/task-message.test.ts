import { expect } from 'chai';
import { exportMessage, importMessage, parseTaskMessage } from '../../../pipeline/bus/task-message.js';

const TASK = 'userimport_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const LOGGED = {
  project_id: 'default',
  request: {
    identifier: 'email',
    upsert: false,
    secrets: 'v1.sealed',
    records: [{ email: 'a@x.co', password: { type: 'bcrypt', password_hash: 0 } }, { email: 'b@x.co' }],
  },
} as const;

describe('bus/task-message', () => {
  it('writes an import as JSON Lines: the request without its records, then a record per line', () => {
    const [first = '', ...lines] = importMessage(TASK, LOGGED).split('\n');
    expect(JSON.parse(first)).to.deep.equal({
      task_id: TASK,
      kind: 'import',
      project_id: 'default',
      request: { identifier: 'email', upsert: false, secrets: 'v1.sealed' },
    });
    expect(lines.map((line) => JSON.parse(line))).to.deep.equal(LOGGED.request.records);
  });

  it('reads an import back whole, and refuses one whose records are not a line each', () => {
    const whole = { task_id: TASK, kind: 'import', ...LOGGED };
    expect(parseTaskMessage(importMessage(TASK, LOGGED))).to.deep.equal(whole);
    expect(parseTaskMessage(JSON.stringify(whole)), 'records inside the first line').to.equal(undefined);
    expect(parseTaskMessage(exportMessage(TASK.replace('import', 'export')))).to.deep.equal({
      task_id: TASK.replace('import', 'export'),
      kind: 'export',
    });
  });

  it('refuses a text that is not a task message', () => {
    const lines = importMessage(TASK, LOGGED).split('\n');
    expect(parseTaskMessage('not json')).to.equal(undefined);
    expect(parseTaskMessage([...lines, '{"email":'].join('\n')), 'a broken record line').to.equal(undefined);
    const withRecords = JSON.stringify({ task_id: TASK, kind: 'import', ...LOGGED });
    expect(parseTaskMessage(`${withRecords}\n{}`), 'records on both layouts').to.equal(undefined);
    expect(
      parseTaskMessage(`${JSON.stringify({ task_id: TASK, kind: 'import' })}\n{}`),
      'no request',
    ).to.equal(undefined);
    expect(parseTaskMessage(`${lines[0]}\n`), 'an empty record line').to.equal(undefined);
  });
});
