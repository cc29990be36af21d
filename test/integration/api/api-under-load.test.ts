import { expect } from 'chai';
import { Agent, fetch } from 'undici';
import { devAdminToken } from '../../../pipeline/development-keys.js';
import { useApiProcess } from '../../support/api-process.js';
import { useTestSchema } from '../../support/database.js';
import { eventually } from '../../support/eventually.js';

/** The API's V8 heap cap in this test, as `make api` caps it. */
const HEAP_MB = 192;
/**
 * What the whole process may hold: the capped heap and, beside it, the young generation, the code
 * (run through tsx here, with the workers in the same process) and the buffers of its sockets.
 */
const RSS_BOUND = 512 * 1024 * 1024;

/**
 * A real API process with a capped heap, under what one token holder can send: the status read of
 * a 500 KB request of 166k empty records, and a flood of GraphQL documents at the limits, while an
 * exact lookup is asked for all along. The process stays up, under its memory bound, and answers.
 */
describe('the API under a hostile load', function () {
  this.timeout(300_000);
  const db = useTestSchema();
  const api = useApiProcess(() => db.schema, { NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` });
  const tls = new Agent({ connect: { rejectUnauthorized: false } });
  after(() => tls.close());

  it('keeps its memory bounded and the lookups answering', async () => {
    const token = await devAdminToken(api().dataDir, 'unused');
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const records = Array.from({ length: 166_000 }, (_, i) => (i === 0 ? { email: 'ann@load.test' } : {}));
    const created = await fetch(`${api().httpsUrl}/_api/admin/users/import`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ identifier: 'email', records }),
      dispatcher: tls,
    });
    expect(created.status).to.equal(200);
    const { id } = (await created.json()) as { id: string };
    const statusUrl = `${api().httpsUrl}/_api/admin/users/import/${id}`;
    const status = await eventually(
      async () => {
        const res = await fetch(`${statusUrl}?details=false`, { headers, dispatcher: tls });
        return ((await res.json()) as { status: string }).status;
      },
      (s) => s === 'completed',
      120,
      200,
    );
    expect(status).to.equal('completed');

    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, api().rss() ?? 0);
    }, 50);
    const lookup = JSON.stringify({
      query: '{ getUserByLoginID(loginIDKey: "email", loginIDValue: "ann@load.test") { id } }',
    });
    const graphql = (body: string) =>
      fetch(`${api().url}/_api/admin/graphql`, { method: 'POST', headers, body }).then(async (res) => ({
        status: res.status,
        body: await res.text(),
      }));
    let flooding = true;
    const lookups: number[] = [];
    const asking = (async () => {
      while (flooding) {
        const res = await graphql(lookup);
        lookups.push(res.body.includes('"id"') ? res.status : -res.status);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    try {
      const aliases = Array.from({ length: 20 }, (_, i) => `u${i}: users(first: 1000) { totalCount }`).join(
        ' ',
      );
      const statusRead = (query: string) =>
        fetch(`${statusUrl}${query}`, { headers, dispatcher: tls }).then(async (res) => ({
          status: res.status,
          body: await res.text(),
        }));
      const flood = Array.from({ length: 400 }, (_, i) => {
        // The default status read, and the largest page, of the 166k details.
        if (i % 4 === 0) return statusRead(i % 8 === 0 ? '' : `?limit=10000&offset=${(i * 400) % 150_000}`);
        // Distinct documents, each at the alias limit, and a quarter past it.
        const past = i % 4 === 1 ? ' x: users { totalCount }' : '';
        return graphql(JSON.stringify({ query: `query q${i} { ${aliases}${past} }` }));
      });
      const answers = await Promise.all(flood);
      // Every answer is a 200, a 400 that names its limit, or a 503 that says to come back later.
      const answered = answers.map((a) =>
        a.status === 200 ? '200' : `${a.status} ${JSON.parse(a.body).error.reason}`,
      );
      const allowed = ['200', '400 GraphQLAliasLimitExceeded', '503 ServiceUnavailable'];
      expect(answered.filter((a) => !allowed.includes(a))).to.deep.equal([]);
      expect(answered.filter((a) => a === '400 GraphQLAliasLimitExceeded')).to.have.length(100);
    } finally {
      flooding = false;
      await asking;
      clearInterval(sampler);
    }
    expect(api().rss(), 'the process is alive').to.be.a('number');
    expect(peak, `peak RSS ${Math.round(peak / 1024 / 1024)} MB`).to.be.below(RSS_BOUND);
    expect(lookups.length).to.be.above(0);
    expect(
      lookups.filter((s) => s !== 200),
      'every lookup answered the user',
    ).to.deep.equal([]);
  });
});
