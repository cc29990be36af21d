import { expect } from 'chai';
import { csvRecord } from '../../../records/csv-record.js';
import type { FileRecord } from '../../../records/file-records.js';
import { type RequestChunk, requestChunks } from '../../../records/request-chunks.js';

async function* fileRecords(items: FileRecord[]): AsyncGenerator<FileRecord> {
  yield* items;
}

async function chunksOf(items: FileRecord[], limit: number): Promise<RequestChunk[]> {
  const chunks: RequestChunk[] = [];
  for await (const c of requestChunks(fileRecords(items), { identifier: 'email', upsert: false }, limit))
    chunks.push(c);
  return chunks;
}

describe('records/request-chunks', () => {
  const frame = Buffer.byteLength('{"identifier":"email","upsert":false,"records":[]}');

  it('packs records in order into bodies of at most the limit, exactly up to it', async () => {
    const record = { email: 'é@x.test' }; // a two-byte character: bytes, not characters, are counted
    const size = Buffer.byteLength(JSON.stringify(record));
    const limit = frame + 3 * size + 2; // three records and their two commas fill a body exactly
    const items = Array.from({ length: 7 }, (_, position) => ({ position, record }));
    const chunks = await chunksOf(items, limit);
    expect(chunks.map((c) => c.positions)).to.deep.equal([[0, 1, 2], [3, 4, 5], [6]]);
    for (const c of chunks) {
      expect(Buffer.byteLength(c.body)).to.be.at.most(limit);
      expect(JSON.parse(c.body)).to.deep.equal({
        identifier: 'email',
        upsert: false,
        records: c.positions.map(() => record),
      });
    }
    expect(Buffer.byteLength(chunks[0]?.body ?? '')).to.equal(limit);
  });

  it('fails alone a record too large for any request, and one that could not be read', async () => {
    const big = { email: 'a@x.test', name: 'x'.repeat(200) };
    const chunks = await chunksOf(
      [
        { position: 0, record: { email: 'b@x.test' } },
        { position: 1, record: big },
        { position: 2, problem: 'not JSON' },
        { position: 3, record: { email: 'c@x.test' } },
      ],
      frame + 100,
    );
    expect(chunks.map((c) => c.positions)).to.deep.equal([[0, 3]]);
    expect(chunks[0]?.localFailures.map((f) => f.position)).to.deep.equal([1, 2]);
    expect(chunks[0]?.localFailures[0]?.problem).to.match(/over the request limit/);
  });
});

describe('records/csv-record', () => {
  it('nests dotted columns, splits roles, reads booleans, drops empty cells', () => {
    expect(
      csvRecord({
        email: 'a@x.test',
        'address.locality': 'Oslo',
        roles: 'reader; writer',
        email_verified: 'TRUE',
        disabled: '0',
        'custom_attributes.tier': '3',
        'custom_attributes.code': '007x',
        name: '',
      }),
    ).to.deep.equal({
      record: {
        email: 'a@x.test',
        address: { locality: 'Oslo' },
        roles: ['reader', 'writer'],
        email_verified: true,
        disabled: false,
        custom_attributes: { tier: 3, code: '007x' },
      },
    });
    expect(csvRecord({ email: 'a@x.test', disabled: 'perhaps' })).to.deep.equal({
      problem: 'disabled: "perhaps" is not true or false',
    });
  });

  it('refuses a column that names a prototype, leaving Object.prototype untouched', () => {
    for (const column of [
      '__proto__.polluted',
      'constructor.prototype.polluted',
      'custom_attributes.__proto__',
    ]) {
      expect(csvRecord({ email: 'a@x.test', [column]: 'yes' })).to.deep.equal({
        problem: `${column}: a column may not name __proto__, constructor, prototype`,
      });
    }
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
  });
});
