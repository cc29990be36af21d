import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { Kafka, logLevel } from 'kafkajs';
import { taskTopic } from '../../../pipeline/bus/kafka-client.js';
import { testDatabaseUrl } from '../../support/database.js';
import { eventually } from '../../support/eventually.js';
import { useImportService } from '../../support/imports.js';
import { testKafkaBrokers } from '../../support/kafka.js';
import { useWorkerProcesses } from '../../support/worker-process.js';

const HASH = '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';
const MFA_HASH = '$2a$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW';
const TOTP = 'JBSWY3DPEHPK3PXPSECRETTOTP';
const BAD_TOTP = 'KRUGS4ZANFZSAYJAONSWG4TFOQ';
const EXPORTED_TOTP = 'MFRGGZDFMZTWQ2LKNNWG23TPOA';
/** The otpauth URI an ndjson export writes beside a TOTP secret: it embeds the secret. */
const otpauth = (secret: string) => `otpauth://totp/p:u?algorithm=SHA1&digits=6&period=30&secret=${secret}`;
const LOOSE_HASH = '$2y$10$looseHashOfABrokenRecordxxxxxxxxxxxxxxxxxxxxxxxxxxxxx';

/** Every row of the schema as `pg_dump --data-only` writes it: what rests on disk. */
async function dataDump(schema: string): Promise<string> {
  const { stdout } = await promisify(execFile)(
    'scripts/services/postgres.sh',
    ['pg-dump', '--data-only', `--schema=${schema}`, testDatabaseUrl()],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout;
}

/** The COPY block of one table in a dump. */
function tableRows(dump: string, table: string): string {
  const at = dump.search(new RegExp(`COPY [a-z0-9_]+\\.${table} `));
  return at < 0 ? '' : dump.slice(at, dump.indexOf('\\.\n', at));
}

/**
 * Secrets of an import (password hashes, mfa.password hashes, TOTP secrets, also those of records
 * that fail) rest in plain text nowhere but the authenticator rows: the task message (outbox, then
 * the queue, which keeps it as the import log) holds them sealed, and the task row holds no record.
 */
describe('import secrets at rest', function () {
  this.timeout(90_000);
  const service = useImportService('postgres', {}, {}, { workers: false });
  const spawnWorker = useWorkerProcesses(service.db.schema);

  it('are sealed while queued, and after completion rest only in the authenticators', async () => {
    const res = await service.post({
      identifier: 'email',
      records: [
        {
          email: 'secret@example.com',
          password: { type: 'bcrypt', password_hash: HASH },
          mfa: {
            password: { type: 'bcrypt', password_hash: MFA_HASH },
            totp: { secret: TOTP, uri: otpauth(TOTP) },
          },
        },
        // The shape of an ndjson export: each TOTP with the otpauth URI that embeds its secret.
        {
          email: 'exported@example.com',
          mfa: { totps: [{ secret: EXPORTED_TOTP, uri: otpauth(EXPORTED_TOTP) }] },
        },
        // Fails validation (an unknown member) but carries secrets all the same.
        {
          email: 'broken@example.com',
          surprise: 1,
          password: LOOSE_HASH,
          mfa: { totp: { secret: BAD_TOTP } },
        },
      ],
    });
    expect(res.statusCode, res.body).to.equal(200);
    const { id } = JSON.parse(res.body) as { id: string };

    const queued = await dataDump(service.db.schema);
    const secrets = [HASH, MFA_HASH, TOTP, BAD_TOTP, LOOSE_HASH, EXPORTED_TOTP];
    for (const secret of secrets) expect(queued, `${secret} while queued`).not.to.include(secret);
    const message = tableRows(queued, 'task_outbox') + tableRows(queued, 'task_queue');
    expect(message).to.include(id).and.to.include('v1.');
    expect(tableRows(queued, 'tasks')).to.include(id).and.not.to.include('example.com');

    const worker = spawnWorker({});
    const status = await service.waitForCompletion(id);
    worker.kill('SIGTERM');
    expect(status.summary).to.deep.include({ inserted: 2, failed: 1 });
    const answered = JSON.stringify(status);
    for (const secret of secrets) expect(answered, `${secret} in the status`).not.to.include(secret);

    const done = await dataDump(service.db.schema);
    const authenticators = tableRows(done, 'authenticators');
    for (const secret of [HASH, MFA_HASH, TOTP, EXPORTED_TOTP]) {
      expect(authenticators, secret).to.include(secret);
    }
    const elsewhere = done.replace(authenticators, '');
    for (const secret of secrets) {
      expect(elsewhere, `${secret} outside the authenticators`).not.to.include(secret);
    }
    // The import log keeps the request, its secrets still sealed.
    expect(tableRows(done, 'task_queue')).to.include('secret@example.com').and.to.include('v1.');
  });
});

describe('import secrets on the Kafka bus', function () {
  this.timeout(60_000);
  const service = useImportService('kafka', {}, {}, { workers: false });

  it('travel sealed: the task message carries the request with its secrets sealed', async () => {
    const res = await service.post({
      identifier: 'email',
      records: [{ email: 'bus@example.com', password: { type: 'bcrypt', password_hash: HASH } }],
    });
    expect(res.statusCode, res.body).to.equal(200);
    const { id } = JSON.parse(res.body) as { id: string };
    // The relay has published it (and made the topic) once the outbox has nothing unpublished.
    const unpublished = await eventually(
      async () =>
        (await service.db().query('SELECT count(*)::int AS n FROM task_outbox WHERE published_at IS NULL'))
          .rows[0]?.n,
      (n) => n === 0,
    );
    expect(unpublished).to.equal(0);
    const kafka = new Kafka({ brokers: testKafkaBrokers(), logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: `${service.config().kafkaTopicPrefix}secrets-reader` });
    const seen: string[] = [];
    try {
      await consumer.connect();
      await consumer.subscribe({
        topic: taskTopic(service.config().kafkaTopicPrefix, 'import'),
        fromBeginning: true,
      });
      let arrived: () => void = () => {};
      const first = new Promise<void>((resolve) => {
        arrived = resolve;
      });
      await consumer.run({
        eachMessage: async ({ message }) => {
          seen.push(message.value?.toString() ?? '');
          arrived();
        },
      });
      await first;
    } finally {
      await consumer.disconnect();
    }
    // JSON Lines: the message without its records, then a record per line.
    const [message, record] = (seen[0] ?? '').split('\n').map((line) => JSON.parse(line));
    expect(message).to.deep.include({ task_id: id, kind: 'import', project_id: 'default' });
    expect(message.request.identifier).to.equal('email');
    expect(record.email).to.equal('bus@example.com');
    // The secret's place names its position in the request's list of secrets, sealed as one value.
    expect(record.password.password_hash).to.equal(0);
    expect(message.request.secrets).to.match(/^v1\./);
    expect(seen.join()).not.to.include(HASH);
  });
});
