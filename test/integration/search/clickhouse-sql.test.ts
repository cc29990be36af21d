import { createClient } from '@clickhouse/client';
import { expect } from 'chai';
import { chContains, chString, chStrings } from '../../../pipeline/search/clickhouse-sql.js';
import { testClickHouseUrl } from '../../support/clickhouse.js';

// The escaping function against the real server: what goes in comes back unchanged.
describe('ClickHouse literals on the real server', () => {
  const hostile = [
    "O'Brien",
    'back\\slash',
    "\\'",
    "x'); DROP TABLE users; --",
    'tab\there\nnewline\rreturn',
    'nul\0inside',
    'Émile 日本 🎉',
    '%_%',
  ];

  it('reads back every string as written, alone and in an array', async () => {
    const client = createClient({ url: testClickHouseUrl() });
    try {
      for (const value of hostile) {
        const [row] = await (
          await client.query({ query: `SELECT ${chString(value)} AS v`, format: 'JSONEachRow' })
        ).json<{ v: string }>();
        expect(row?.v, JSON.stringify(value)).to.equal(value);
      }
      const [row] = await (
        await client.query({ query: `SELECT ${chStrings(hostile)} AS v`, format: 'JSONEachRow' })
      ).json<{ v: string[] }>();
      expect(row?.v).to.deep.equal(hostile);
    } finally {
      await client.close();
    }
  });

  it('matches wildcards literally in LIKE', async () => {
    const client = createClient({ url: testClickHouseUrl() });
    try {
      const like = async (text: string, part: string) => {
        const [row] = await (
          await client.query({
            query: `SELECT ${chString(text)} LIKE ${chContains(part)} AS m`,
            format: 'JSONEachRow',
          })
        ).json<{ m: number }>();
        return row?.m;
      };
      expect(await like('50%_off', '%_')).to.equal(1);
      expect(await like('50xyoff', '%_')).to.equal(0);
      expect(await like('a\\b', 'a\\b')).to.equal(1);
      expect(await like('ab', 'a\\b')).to.equal(0);
    } finally {
      await client.close();
    }
  });
});
