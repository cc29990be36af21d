import { Writable } from 'node:stream';
import { expect } from 'chai';
import { createLogger } from '../../../pipeline/log.js';
import { makeTestKeys, testApp, testConfig } from '../../support/admin-api.js';
import { useTestSchema } from '../../support/database.js';

describe('api/app: an error after the response began reaches the log', () => {
  const db = useTestSchema();

  it("logs Koa's error event as a JSON line with the path, not a bare stack on stderr", async () => {
    const keys = await makeTestKeys();
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const app = testApp(testConfig(keys), db(), keys, { log: createLogger('info', sink) });
    expect(app.listenerCount('error')).to.equal(1);
    app.emit('error', new Error('the results stream broke'), { path: '/_api/admin/users/import/x/results' });
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged).to.have.length(1);
    expect(logged[0]).to.deep.include({
      msg: 'response failed after it began',
      path: '/_api/admin/users/import/x/results',
    });
    expect(logged[0]).to.have.nested.property('err.message', 'the results stream broke');
  });
});
