import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import type { TaskBus } from '../../../pipeline/bus/bus.js';
import { createLogger } from '../../../pipeline/log.js';
import { type ReplayedImport, replayImports } from '../../../pipeline/replay/replay-imports.js';
import { deleteUnnamedTaskFiles, sweepImportFiles } from '../../../pipeline/tasks/retention.js';
import { adminToken } from '../../support/admin-api.js';
import { useFileImportService } from '../../support/file-imports.js';
import { HTTPS } from '../../support/imports.js';
import { testBus } from '../../support/task-endpoints.js';
import { passwordHashOf } from '../../support/users.js';

const HASH = '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';

/** `n` ndjson lines of users `user<i>@files.example.com`, each with a name and a password hash. */
function ndjson(n: number, from = 0): string {
  let text = '';
  for (let i = from; i < from + n; i++)
    text += `${JSON.stringify({ email: `user${i}@files.example.com`, name: `User ${i}`, password: { type: 'bcrypt', password_hash: HASH } })}\n`;
  return text;
}

type Detail = {
  index: number;
  line?: number;
  outcome: string;
  errors?: { info?: { causes?: { details: { message: string } }[] } }[];
};

/** The message of a failed detail's first cause. */
const why = (detail: Detail | undefined) => detail?.errors?.[0]?.info?.causes?.[0]?.details.message ?? '';

/**
 * An import of a file uploaded to blob storage through a write-only URL (docs/file-imports.md): one
 * task reads it as a stream, in file order, and applies it in batches; its records rest sealed.
 */
describe('file imports', function () {
  this.timeout(120_000);
  const service = useFileImportService({ settings: { import_batch_size: 100 } });

  it('applies every record of an ndjson.gz upload and leaves no plain copy in the store', async () => {
    const id = await service.upload(gzipSync(ndjson(2_500)), 64 * 1024);
    const task = await service.imports.start({
      identifier: 'email',
      source: { upload_id: id },
      format: 'ndjson',
    });
    const done = await service.imports.waitForCompletion(task);
    expect(done.summary).to.deep.equal({
      total: 2500,
      inserted: 2500,
      updated: 0,
      skipped: 0,
      failed: 0,
      warnings: 0,
    });
    expect(await passwordHashOf(service.db(), 'user2499@files.example.com')).to.equal(HASH);
    // The upload is gone; the sealed copy kept for a replay holds no record in plain text.
    const names = await service.blobs().list('', { uncommitted: true });
    expect(names.filter((n) => n.includes('/uploads/'))).to.deep.equal([]);
    const sealed = names.filter((n) => n.endsWith('.sealed'));
    expect(sealed).to.have.length(1);
    const chunks: Buffer[] = [];
    for await (const chunk of await service.blobs().read(sealed[0] as string)) chunks.push(chunk as Buffer);
    const stored = Buffer.concat(chunks).toString('latin1');
    expect(stored).to.not.include('files.example.com');
    expect(stored).to.not.include(HASH);
  });

  it('maps CSV columns as asked, a header it does not name to the member it names', async () => {
    const csv =
      'E-mail,Full name,given_name,Notes\nann@files.example.com,Ann Lee,Ann,x\nbob@files.example.com,Bob Roe,Bob,y\n';
    const id = await service.upload(Buffer.from(csv));
    const done = await service.imports.run({
      identifier: 'email',
      source: { upload_id: id },
      format: 'csv',
      csv: { columns: { 'E-mail': 'email', 'Full name': 'name', Notes: '' } },
    });
    expect((done.summary as Record<string, number>).inserted).to.equal(2);
    const { rows } = await service.db().query(
      `SELECT standard_attributes->>'name' AS name, standard_attributes->>'given_name' AS given
         FROM users WHERE standard_attributes->>'email' = 'ann@files.example.com'`,
    );
    expect(rows).to.deep.equal([{ name: 'Ann Lee', given: 'Ann' }]);
  });

  it('fails a bad ndjson line alone, naming its line', async () => {
    const text = `${ndjson(2, 10_100)}{"email": "broken@files.example.com",\n${ndjson(2, 10_102)}`;
    const id = await service.upload(Buffer.from(text));
    const done = await service.imports.run({
      identifier: 'email',
      source: { upload_id: id },
      format: 'ndjson',
    });
    const details = done.details as Detail[];
    expect(details.map((d) => d.outcome)).to.deep.equal([
      'inserted',
      'inserted',
      'failed',
      'inserted',
      'inserted',
    ]);
    expect(why(details[2])).to.match(/^line 3: not JSON/);
    expect(details.map((d) => [d.index, d.line])).to.deep.equal([
      [0, 1],
      [1, 2],
      [2, 3],
      [3, 4],
      [4, 5],
    ]);
  });

  it('fails a bad line deep in a large file alone: its frame, batch and neighbours apply', async () => {
    const lines = ndjson(20_000, 100_000).split('\n');
    lines[15_000] = '{"email": "deep@files.example.com", "name": ';
    const id = await service.upload(gzipSync(lines.join('\n')));
    const done = await service.imports.run({
      identifier: 'email',
      source: { upload_id: id },
      format: 'ndjson',
    });
    expect(done.summary).to.include({ total: 20_000, inserted: 19_999, failed: 1 });
    const res = await service.imports.status(`${done.id}?outcome=failed`);
    const failed = res.body.details as Detail[];
    expect(failed.map((d) => [d.index, d.line])).to.deep.equal([[15_000, 15_001]]);
    expect(why(failed[0])).to.match(/^line 15001: not JSON/);
  });

  it('applies a JSON array up to where it breaks and fails the rest naming the byte', async () => {
    const good = Array.from({ length: 3 }, (_, i) => ({ email: `arr${i}@files.example.com` }));
    const text = `${JSON.stringify(good).slice(0, -1)},{"email": "arr3@files.example.com"}, {"email": tru`;
    // Blocks small enough that the break is in a later read than the first records.
    const id = await service.upload(Buffer.from(text));
    const done = await service.imports.run({
      identifier: 'email',
      source: { upload_id: id },
      format: 'json',
    });
    const details = done.details as Detail[];
    expect(details.at(-1)?.outcome).to.equal('failed');
    expect(why(details.at(-1))).to.match(/^index \d: the file cannot be read past byte \d+ of \d+/);
  });

  it('reads a truncated gzip up to its end and fails the rest', async () => {
    const whole = gzipSync(ndjson(50, 10_200));
    const id = await service.upload(whole.subarray(0, Math.floor(whole.length * 0.6)));
    const done = await service.imports.run({
      identifier: 'email',
      source: { upload_id: id },
      format: 'ndjson',
    });
    const details = done.details as Detail[];
    expect(details.at(-1)?.outcome).to.equal('failed');
    expect(why(details.at(-1))).to.match(
      /the file cannot be read past byte \d+ of \d+: unexpected end of file/,
    );
    expect(details.slice(0, -1).every((d) => d.outcome === 'inserted')).to.equal(true);
  });

  it('applies the records of one user in file order: with upsert, the last wins', async () => {
    const lines = [0, 1, 2, 3, 4, 5].map((v) =>
      JSON.stringify({ email: `same${v % 2}@files.example.com`, name: `version ${v}` }),
    );
    // Spread across frames (a batch of 100 records each) too.
    const text = `${lines.slice(0, 3).join('\n')}\n${ndjson(250, 11_000)}${lines.slice(3).join('\n')}\n`;
    const id = await service.upload(Buffer.from(text));
    await service.imports.run({
      identifier: 'email',
      upsert: true,
      source: { upload_id: id },
      format: 'ndjson',
    });
    const { rows } = await service.db().query(
      `SELECT standard_attributes->>'email' AS email, standard_attributes->>'name' AS name FROM users
        WHERE standard_attributes->>'email' LIKE 'same%' ORDER BY 1`,
    );
    expect(rows).to.deep.equal([
      { email: 'same0@files.example.com', name: 'version 4' },
      { email: 'same1@files.example.com', name: 'version 5' },
    ]);
  });

  describe('refusals', () => {
    const refused = async (body: Record<string, unknown>) => {
      const res = await service.imports.post({ identifier: 'email', format: 'ndjson', ...body });
      return {
        status: res.statusCode,
        error: (JSON.parse(res.body) as { error: Record<string, unknown> }).error,
      };
    };

    it('an upload that does not exist here', async () => {
      const { status, error } = await refused({ source: { upload_id: `upload_${'A'.repeat(32)}` } });
      expect([status, error.reason]).to.deep.equal([404, 'ImportUploadNotFound']);
    });

    it("another project's upload, written and open, as if it did not exist", async () => {
      const upload = `upload_${'D'.repeat(32)}`;
      const blob = `beta/uploads/${upload}`;
      await service.blobs().upload(blob, Readable.from([Buffer.from(ndjson(1, 50_000))]), {
        contentType: 'application/octet-stream',
        contentDisposition: 'attachment',
      });
      await service
        .db()
        .query(
          "INSERT INTO import_files (project_id, upload_id, upload_blob, expires_at) VALUES ('beta', $1, $2, now() + interval '1 hour')",
          [upload, blob],
        );
      const { status, error } = await refused({ source: { upload_id: upload } });
      expect([status, error.reason]).to.deep.equal([404, 'ImportUploadNotFound']);
      const block = await service.client().request({
        method: 'PUT',
        url: `/_api/admin/users/import/uploads/${upload}/blocks/0`,
        token: await adminToken(service.keys()),
        headers: HTTPS,
        body: Buffer.from('{}'),
      });
      expect([block.statusCode, JSON.parse(block.body).error.reason]).to.deep.equal([
        404,
        'ImportUploadNotFound',
      ]);
    });

    it('an upload nothing was written to', async () => {
      const upload = await service.newUpload();
      const { status, error } = await refused({ source: { upload_id: upload.body.upload_id } });
      expect([status, error.reason]).to.deep.equal([400, 'ImportUploadEmpty']);
    });

    it('an upload whose URL expired before an import named it', async () => {
      const id = await service.upload(Buffer.from(ndjson(1)));
      await service
        .db()
        .query("UPDATE import_files SET expires_at = now() - interval '1 second' WHERE upload_id = $1", [id]);
      const { status, error } = await refused({ source: { upload_id: id } });
      expect([status, error.reason]).to.deep.equal([400, 'ImportUploadExpired']);
    });

    it('an upload another import reads', async () => {
      const id = await service.upload(Buffer.from(ndjson(1, 5000)));
      await service.imports.start({ identifier: 'email', source: { upload_id: id }, format: 'ndjson' });
      const { status, error } = await refused({ source: { upload_id: id } });
      expect([status, error.reason]).to.deep.equal([400, 'ImportUploadTaken']);
    });

    it('records and a source at once, a CSV mapping for ndjson, a format without a source', async () => {
      // The import endpoint's own refusals of a request's shape: `{"error": "<message>"}`.
      const malformed = async (body: Record<string, unknown>) => {
        const res = await service.imports.post({ identifier: 'email', format: 'ndjson', ...body });
        return [res.statusCode, (JSON.parse(res.body) as { error: string }).error];
      };
      const source = { upload_id: `upload_${'B'.repeat(32)}` };
      expect(await malformed({ source, records: [{ email: 'a@b.c' }] })).to.deep.equal([
        400,
        '/: records and source exclude each other',
      ]);
      expect(await malformed({ source, csv: { columns: {} } })).to.deep.equal([
        400,
        '/csv: only with format csv',
      ]);
      expect(await malformed({ records: [{ email: 'a@b.c' }] })).to.deep.equal([
        400,
        '/: must have property source when property format is present',
      ]);
    });
  });
});

describe('file imports past the size limit', function () {
  this.timeout(60_000);
  const service = useFileImportService({ settings: { import_file_max_bytes: 1000 } });

  it('refuses a file over IMPORT_FILE_MAX_BYTES with 413, naming the limit', async () => {
    const id = await service.upload(Buffer.from(ndjson(20)));
    const res = await service.imports.post({
      identifier: 'email',
      source: { upload_id: id },
      format: 'ndjson',
    });
    const { error } = JSON.parse(res.body) as { error: { reason: string; info: Record<string, number> } };
    expect([res.statusCode, error.reason, error.info.limit]).to.deep.equal([413, 'ImportFileTooLarge', 1000]);
  });
});

describe('file imports kept and swept', function () {
  this.timeout(60_000);
  const service = useFileImportService({ workers: false });

  const blobNames = async () => (await service.blobs().list('', { uncommitted: true })).sort();
  const fileRows = async () =>
    (await service.db().query('SELECT upload_id FROM import_files ORDER BY upload_id')).rows.map(
      (r: { upload_id: string }) => r.upload_id,
    );

  it('deletes uploads no import named once expired, and imported files past their keep, not others', async () => {
    const unused = await service.upload(Buffer.from(ndjson(1)));
    const named = await service.upload(Buffer.from(ndjson(1)));
    const kept = await service.upload(Buffer.from(ndjson(1)));
    await service.imports.start({ identifier: 'email', source: { upload_id: named }, format: 'ndjson' });
    // As if `kept` had been taken in by a task: its sealed copy, kept until a time now past.
    const sealed = `${service.config().project.id}/imports/kept.sealed`;
    await service.blobs().upload(sealed, Readable.from([Buffer.from('sealed')]), {
      contentType: 'application/octet-stream',
      contentDisposition: 'attachment',
    });
    const db = service.db();
    await db.query(
      "UPDATE import_files SET sealed_blob = $2, records = 1, kept_until = now() + interval '1 hour' WHERE upload_id = $1",
      [kept, sealed],
    );
    await db.query(
      "UPDATE import_files SET expires_at = now() - interval '1 second' WHERE upload_id IN ($1, $2)",
      [unused, named],
    );
    // Every file is older than a retention of 0 s, and none is a task's: the unnamed sweep keeps them.
    const projects = [service.config().project.id];
    expect(await deleteUnnamedTaskFiles(db, service.blobs(), 0, projects)).to.deep.equal([]);
    expect(await sweepImportFiles(db, service.blobs())).to.equal(1);
    expect(await fileRows()).to.deep.equal([kept, named].sort());
    await db.query("UPDATE import_files SET kept_until = now() - interval '1 second' WHERE upload_id = $1", [
      kept,
    ]);
    expect(await sweepImportFiles(db, service.blobs())).to.equal(1);
    expect(await fileRows()).to.deep.equal([named]);
    expect(await blobNames()).to.deep.equal([`${service.config().project.id}/uploads/${named}`]);
  });
});

describe('a file import waiting for a worker', function () {
  this.timeout(60_000);
  const service = useFileImportService({ workers: false });

  it('shows the bytes of its upload in its progress, and a total of 0 until the file is taken in', async () => {
    const content = Buffer.from(ndjson(3));
    const id = await service.upload(content);
    const task = await service.imports.start({
      identifier: 'email',
      source: { upload_id: id },
      format: 'ndjson',
    });
    const { body } = await service.imports.status(task);
    expect(body.progress).to.deep.equal({
      processed: 0,
      total: 0,
      bytes_read: 0,
      bytes_total: content.length,
    });
  });
});

describe('file imports from a URL', function () {
  this.timeout(60_000);
  // The test's file server listens on this machine: the network policy's allow-list lets it in.
  const service = useFileImportService({ settings: { webhook_allowed_hosts: '127.0.0.1' } });
  const file = gzipSync(ndjson(1_000, 20_000));
  let server: Server;
  let base = '';

  before(async () => {
    // A signed URL's store: ranged reads, and nothing without the signature.
    server = createServer((req, res) => {
      if (!req.url?.endsWith('?sig=s3cr3t')) {
        res.writeHead(403).end();
        return;
      }
      const range = /bytes=(\d+)-(\d+)/.exec(req.headers.range ?? '');
      if (range) {
        const [start, end] = [Number(range[1]), Math.min(Number(range[2]), file.length - 1)];
        res
          .writeHead(206, { 'content-range': `bytes ${start}-${end}/${file.length}` })
          .end(file.subarray(start, end + 1));
      } else res.writeHead(200, { 'content-length': file.length }).end(file);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('reads the file at a signed URL, and keeps the URL only sealed', async () => {
    const done = await service.imports.run({
      identifier: 'email',
      source: { url: `${base}/users.ndjson.gz?sig=s3cr3t` },
      format: 'ndjson',
    });
    expect(done.summary).to.include({ total: 1000, inserted: 1000 });
    const { rows } = await service.db().query(
      `SELECT (SELECT string_agg(source::text, '') FROM import_files) AS files,
              coalesce((SELECT string_agg(message, '') FROM task_outbox), '') ||
              coalesce((SELECT string_agg(message, '') FROM task_queue), '') AS logged`,
    );
    expect(rows[0].files).to.include('sealed_url').and.not.include('s3cr3t');
    expect(rows[0].logged).to.include('upload_').and.not.include('s3cr3t');
  });

  it('refuses a URL off the network policy, and one that answers an error', async () => {
    const refused = async (url: string) => {
      const res = await service.imports.post({ identifier: 'email', source: { url }, format: 'ndjson' });
      const { error } = JSON.parse(res.body) as { error: { reason: string; message: string } };
      return [res.statusCode, error.reason, error.message];
    };
    expect(await refused('https://10.1.2.3/users.ndjson')).to.deep.equal([
      400,
      'ImportSourceRefused',
      'the source url names an address that is not public',
    ]);
    expect(await refused('http://files.example.com/users.ndjson')).to.deep.equal([
      400,
      'ImportSourceRefused',
      'the source url must be an https:// URL',
    ]);
    expect(await refused(`${base}/users.ndjson.gz?sig=wrong`)).to.deep.equal([
      400,
      'ImportSourceUnreadable',
      'the source url answered 403',
    ]);
  });
});

describe('a file import replayed', function () {
  this.timeout(60_000);
  const service = useFileImportService();
  let bus: TaskBus | undefined;
  after(async () => bus?.close());

  const replay = async (from: Date, dryRun: boolean) => {
    bus ??= testBus('postgres', service.config().kafkaTopicPrefix, service.db(), createLogger('silent'));
    const seen: ReplayedImport[] = [];
    const target = {
      pool: service.db(),
      log: bus.importLog,
      bus: 'postgres' as const,
      groupPrefix: service.config().kafkaTopicPrefix,
      project: service.config().project.id,
    };
    await replayImports(target, { from: { time: from }, dryRun }, { onImport: (i) => seen.push(i) });
    return seen;
  };

  it('reads its kept file again, and once the file is swept says it is gone', async () => {
    const from = new Date(Date.now() - 1000);
    const id = await service.upload(Buffer.from(ndjson(5, 30_000)));
    const first = await service.imports.start({
      identifier: 'email',
      source: { upload_id: id },
      format: 'ndjson',
    });
    await service.imports.waitForCompletion(first);
    await service
      .db()
      .query("DELETE FROM users WHERE standard_attributes->>'email' LIKE 'user3000_@files.example.com'");

    const seen = await replay(from, false);
    expect(seen.map((i) => [i.replay_of, i.records, i.skipped])).to.deep.equal([[first, 5, undefined]]);
    const again = await service.imports.waitForCompletion(seen[0]?.task_id as string);
    expect(again.summary).to.include({ inserted: 5 });
    expect(again.replay_of).to.equal(first);
    const { rows: totals } = await service
      .db()
      .query('SELECT progress_total FROM tasks WHERE id = $1', [seen[0]?.task_id]);
    expect(totals, "the replay's total is the file's records").to.deep.equal([{ progress_total: 5 }]);

    await service
      .db()
      .query("UPDATE import_files SET kept_until = now() - interval '1 second' WHERE upload_id = $1", [id]);
    expect(await sweepImportFiles(service.db(), service.blobs())).to.equal(1);
    const gone = await replay(from, true);
    expect(gone.filter((i) => i.replay_of === first).map((i) => i.skipped)).to.deep.equal([
      'a file import whose file is no longer kept (IMPORT_FILE_RETENTION_SECONDS)',
    ]);
  });
});

describe("a file import of another system's users", function () {
  this.timeout(60_000);
  const service = useFileImportService();
  before(async () => {
    await service
      .db()
      .query("INSERT INTO roles (id, project_id, key) VALUES (gen_random_uuid(), $1, 'admin')", [
        service.config().project.id,
      ]);
  });
  // An Auth0 export's users: a SAML identity has no place here, nor a login count.
  const auth0 = [
    {
      user_id: 'auth0|5f1c0e',
      email: 'ana@auth0-file.test',
      name: 'Ana Silva',
      password_hash: '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW',
      app_metadata: { roles: ['admin'] },
      logins_count: 12,
      identities: [
        { provider: 'auth0', user_id: '5f1c0e', connection: 'Username-Password-Authentication' },
        { provider: 'samlp', user_id: 'ana@corp', connection: 'corp-saml', isSocial: false },
      ],
    },
    { user_id: 'auth0|77aa', email: 'ben@auth0-file.test', name: 'Ben' },
  ];
  const file = Buffer.from(auth0.map((u) => JSON.stringify(u)).join('\n'));
  const request = (id: string, from: Record<string, unknown>) => ({
    identifier: 'email',
    source: { upload_id: id },
    format: 'ndjson',
    // The tenant keeps its roles in app_metadata (userctl's --roles-from).
    from: { system: 'auth0', mapping: { roles_from: 'app_metadata/roles' }, ...from },
  });

  it('ends before applying anything when a credential or identity would be lost unasked', async () => {
    const done = await service.imports.run(request(await service.upload(file), {}));
    const error = done.error as { reason: string; info: { fields: { field: string }[] } };
    expect(error.reason).to.equal('ImportFieldsLost');
    expect(error.info.fields.map((f) => f.field)).to.deep.equal(['identities/*']);
    const { rows } = await service
      .db()
      .query(
        "SELECT count(*)::int AS n FROM users WHERE standard_attributes->>'email' LIKE '%auth0-file.test'",
      );
    expect(rows[0].n, 'nothing applied').to.equal(0);
  });

  it('converts each user as userctl does, and names what it left out in a warning', async () => {
    const done = await service.imports.run(
      request(await service.upload(file), { allow_loss: ['identities'] }),
    );
    expect(done.summary, JSON.stringify(done.error ?? done.details)).to.include({ inserted: 2, failed: 0 });
    const details = done.details as { line: number; warnings?: { message: string }[] }[];
    expect(details.map((d) => d.line)).to.deep.equal([1, 2]);
    expect(details[0]?.warnings, JSON.stringify(details)).to.deep.include({
      message: 'members of the source user left out: user_id, logins_count, identities/1.',
    });
    const { rows } = await service.db().query(
      `SELECT u.standard_attributes->>'name' AS name, (SELECT count(*)::int FROM user_roles r WHERE r.user_id = u.id) AS roles
         FROM users u WHERE u.standard_attributes->>'email' = 'ana@auth0-file.test'`,
    );
    expect(rows).to.deep.equal([{ name: 'Ana Silva', roles: 1 }]);
  });
});

describe('a file written in blocks through the service (the console)', function () {
  this.timeout(60_000);
  const service = useFileImportService();
  const call = async (method: 'PUT' | 'POST', url: string, body?: unknown) =>
    service.client().request({ method, url, token: await adminToken(service.keys()), headers: HTTPS, body });

  it('stages each block, commits them, and the import reads the file', async () => {
    const upload = (await service.newUpload()).body.upload_id as string;
    const file = Buffer.from(ndjson(300, 40_000));
    const third = Math.ceil(file.length / 3);
    const base = `/_api/admin/users/import/uploads/${upload}`;
    // The blocks arrive in any order; the commit puts them in theirs.
    for (const n of [2, 0, 1]) {
      const res = await call('PUT', `${base}/blocks/${n}`, file.subarray(n * third, (n + 1) * third));
      expect(res.statusCode, res.body).to.equal(204);
    }
    const missing = await call('POST', `${base}/commit`, { blocks: 4 });
    expect([missing.statusCode, JSON.parse(missing.body).error.reason]).to.deep.equal([
      400,
      'ImportUploadBlocksMissing',
    ]);
    expect((await call('POST', `${base}/commit`, { blocks: 3 })).statusCode).to.equal(204);
    const done = await service.imports.run({
      identifier: 'email',
      source: { upload_id: upload },
      format: 'ndjson',
    });
    expect(done.summary).to.include({ inserted: 300, failed: 0 });
    // Once an import reads it, the upload is closed.
    const late = await call('PUT', `${base}/blocks/3`, Buffer.from('{}'));
    expect([late.statusCode, JSON.parse(late.body).error.reason]).to.deep.equal([400, 'ImportUploadTaken']);
  });

  it('refuses a block over 8 MiB with 413 naming the limit, and an upload of another id', async () => {
    const upload = (await service.newUpload()).body.upload_id as string;
    const big = await call(
      'PUT',
      `/_api/admin/users/import/uploads/${upload}/blocks/0`,
      Buffer.alloc(8 * 1024 * 1024 + 1),
    );
    const { error } = JSON.parse(big.body) as { error: { reason: string; info: { limit: number } } };
    expect([big.statusCode, error.reason, error.info.limit]).to.deep.equal([
      413,
      'RequestEntityTooLarge',
      8 * 1024 * 1024,
    ]);
    const other = await call(
      'PUT',
      `/_api/admin/users/import/uploads/upload_${'C'.repeat(32)}/blocks/0`,
      Buffer.from('x'),
    );
    expect([other.statusCode, JSON.parse(other.body).error.reason]).to.deep.equal([
      404,
      'ImportUploadNotFound',
    ]);
  });
});

describe('uploads open at once', function () {
  this.timeout(60_000);
  const service = useFileImportService({ settings: { import_uploads_open_limit: 2 } });

  it('answers 429 naming the limit past IMPORT_UPLOADS_OPEN_LIMIT, and again once one is named', async () => {
    const first = await service.upload(Buffer.from(ndjson(1, 60_000)));
    await service.newUpload();
    const refused = await service.newUpload();
    const error = refused.body.error as { reason: string; info: Record<string, number> };
    expect([refused.statusCode, error.reason, error.info.limit]).to.deep.equal([429, 'ImportUploadsOpen', 2]);
    await service.imports.start({ identifier: 'email', source: { upload_id: first }, format: 'ndjson' });
    expect((await service.newUpload()).statusCode).to.equal(200);
  });
});

for (const transport of ['postgres', 'kafka'] as const) {
  describe(`a file import in parts on ${transport}`, function () {
    this.timeout(120_000);
    const service = useFileImportService(
      { settings: { import_batch_size: 100, import_file_part_bytes: 20_000, import_file_parts_max: 3 } },
      transport,
    );

    it('routes each user to one part: every record once, the last of a user standing', async () => {
      const lines = ndjson(3_000, 200_000)
        .split('\n')
        .filter((l) => l !== '');
      for (const [at, version] of [
        [5, 'first'],
        [1_500, 'second'],
        [2_990, 'third'],
      ] as const)
        lines[at] = JSON.stringify({ email: 'Twice@Parts.Example.com', name: version });
      const id = await service.upload(Buffer.from(`${lines.join('\n')}\n`));
      const done = await service.imports.run({
        identifier: 'email',
        upsert: true,
        source: { upload_id: id },
        format: 'ndjson',
      });
      expect(done.summary).to.include({ total: 3_000, inserted: 2_998, updated: 2, failed: 0 });
      const { rows } = await service.db().query(
        `SELECT (SELECT count(*)::int FROM import_file_parts WHERE task_id = $1 AND done) AS parts,
                (SELECT standard_attributes->>'name' FROM users
                  WHERE standard_attributes->>'email' = 'twice@parts.example.com') AS name`,
        [done.id],
      );
      expect(rows[0]).to.deep.equal({ parts: 3, name: 'third' });
    });
  });
}
