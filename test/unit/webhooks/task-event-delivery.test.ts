import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { configFromDocument } from '../../../pipeline/config.js';
import { ConfigError } from '../../../pipeline/errors.js';
import { shownUrl } from '../../../pipeline/webhooks/endpoints.js';
import { bodySignature, eventBody } from '../../../pipeline/webhooks/event-body.js';
import { nextAttemptAt } from '../../../pipeline/webhooks/retry-schedule.js';

const SCHEDULE = {
  timeoutMs: 10_000,
  retryFirstMs: 10_000,
  retryMaxMs: 3_600_000,
  giveUpSeconds: 86_400,
  concurrency: 4,
};

describe('task event delivery', () => {
  it('signs the body as Authgear signs hook bodies, with the attempt time inside it', () => {
    const now = new Date('2026-11-25T10:00:00.900Z');
    const body = eventBody({ id: 'e1', type: 'user_import.completed', payload: { task_id: 't' } }, now);
    expect(JSON.parse(body)).to.deep.equal({
      id: 'e1',
      type: 'user_import.completed',
      payload: { task_id: 't' },
      context: { timestamp: 1795600800 },
    });
    expect(bodySignature('secret-secret-secret', body)).to.equal(
      createHmac('sha256', 'secret-secret-secret').update(body).digest('hex'),
    );
  });

  it('waits 10 s, then twice as long each time up to an hour, and gives up after 24 h', () => {
    const created = new Date('2026-11-25T00:00:00Z');
    const noJitter = () => 0;
    const wait = (attempt: number, now = created) =>
      (nextAttemptAt(attempt, created, now, SCHEDULE, noJitter)?.getTime() ?? Number.NaN) - now.getTime();
    expect([1, 2, 3, 4, 9].map((a) => wait(a))).to.deep.equal([10_000, 20_000, 40_000, 80_000, 2_560_000]);
    expect(wait(10)).to.equal(3_600_000);
    expect(wait(60)).to.equal(3_600_000);
    const late = new Date(created.getTime() + 86_400_000 - 5_000);
    expect(nextAttemptAt(3, created, late, SCHEDULE, noJitter)).to.equal(undefined);
    const jittered = nextAttemptAt(1, created, created, SCHEDULE, () => 0.999)?.getTime() ?? 0;
    expect(jittered - created.getTime()).to.be.within(10_000, 11_000);
  });

  it('shows an endpoint without the user info, query or fragment where a token may hide', () => {
    expect(shownUrl('https://u:p@hooks.example.com:8443/in/authgear?token=s3cret#x')).to.equal(
      'https://hooks.example.com:8443/in/authgear',
    );
  });

  it('refuses endpoints with one id twice, a short secret, or an unknown event', () => {
    const endpoint = {
      id: 'a',
      url: 'https://h.example/x',
      secret: 'sixteen-chars-ok',
      events: ['user_import.completed'],
    };
    const config = (webhooks: unknown[]) => () => configFromDocument({ project: { webhooks } });
    expect(config([endpoint])().project.webhooks).to.deep.equal([endpoint]);
    expect(config([endpoint, endpoint])).to.throw(ConfigError, /webhooks must have unique ids/);
    expect(config([{ ...endpoint, secret: 'short' }])).to.throw(
      ConfigError,
      /PROJECT_CONFIG webhooks\.0\.secret/,
    );
    expect(
      config([{ ...endpoint, events: ['user.created', 'user.deleted'] }])().project.webhooks,
    ).to.have.length(1);
    expect(config([{ ...endpoint, events: ['user.renamed'] }])).to.throw(
      ConfigError,
      /webhooks\.0\.events\.0/,
    );
  });
});
