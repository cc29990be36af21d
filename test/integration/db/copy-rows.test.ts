import { expect } from 'chai';
import { copyRows } from '../../../pipeline/db/copy-rows.js';
import { withTransaction } from '../../../pipeline/db/transaction.js';
import { useTestSchema } from '../../support/database.js';

describe('db/copy-rows', () => {
  const db = useTestSchema();

  const roundTrip = (rows: unknown[][]) =>
    withTransaction(db(), async (client) => {
      await client.query(
        'CREATE TEMP TABLE copied (n integer, t text, b boolean, f double precision, j jsonb) ON COMMIT DROP',
      );
      await copyRows(client, 'copied', ['n', 't', 'b', 'f', 'j'], rows as never);
      return (await client.query('SELECT n, t, b, f, j FROM copied ORDER BY n')).rows;
    });

  it('stores every text exactly, telling an empty string from NULL', async () => {
    const texts = [
      '',
      'plain',
      'comma, "quotes" and \'apostrophes\'',
      'line\nbreak and\r\ncrlf',
      'back\\slash \\N and \\.',
      '\\.',
      'tab\there',
      'unicode: Zoë 🔐 日本',
      ' leading and trailing ',
    ];
    const back = await roundTrip([
      ...texts.map((t, n) => [n, t, null, null, null]),
      [texts.length, null, null, null, null],
    ]);
    expect(back.map((r) => r.t)).to.deep.equal([...texts, null]);
  });

  it('stores booleans, numbers and JSON (objects, arrays, bare strings) as they are', async () => {
    const back = await roundTrip([
      [0, null, true, 1.5, { a: 'x,"y"\n', nested: [1, null, { b: false }] }],
      [1, null, false, -2e-7, ['a', '']],
      [2, null, null, null, JSON.stringify('a bare "string"')],
      [3, null, null, 0, JSON.stringify(42)],
    ]);
    expect(back).to.deep.equal([
      { n: 0, t: null, b: true, f: 1.5, j: { a: 'x,"y"\n', nested: [1, null, { b: false }] } },
      { n: 1, t: null, b: false, f: -2e-7, j: ['a', ''] },
      { n: 2, t: null, b: null, f: null, j: 'a bare "string"' },
      { n: 3, t: null, b: null, f: 0, j: 42 },
    ]);
  });

  it('sends no statement at all for no rows', async () => {
    // A COPY into a table that does not exist would fail: none is sent.
    await withTransaction(db(), (client) => copyRows(client, 'no_such_table', ['n'], []));
  });
});
