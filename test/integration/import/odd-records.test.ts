import { expect } from 'chai';
import fc from 'fast-check';
import { importRecordValidator } from '../../../schemas/index.js';
import { useImportService } from '../../support/imports.js';

type Detail = { index: number; outcome: string; user_id?: string; errors?: { reason: string }[] };

const HASH = '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';

/** Times at the odd corners of RFC 3339 and of what JavaScript and Postgres can keep. */
const ODD_TIMES = [
  '2016-12-31T23:59:60Z',
  '2030-01-01T00:00:00+01',
  '2030-01-01T00:00:00+0100',
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:30:00+01:00',
  '9999-12-31T23:59:59-01:00',
  '2030-01-01t00:00:00z',
  '2030-01-01 00:00:00Z',
  '2030-01-01T00:00:00.123456789Z',
  '1970-01-01T00:00:00-00:00',
];

const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('', ' ', '\u0000', '\ud800', '\udfff', 'e\u0301', '\u202e', 'ﬃ', 'İ', '𝔘'),
);
const time = fc.oneof(
  fc.constantFrom(...ODD_TIMES),
  fc
    .date({
      min: new Date('0001-01-01T00:00:00Z'),
      max: new Date('9999-12-31T23:59:59Z'),
      noInvalidDate: true,
    })
    .map((d) => d.toISOString()),
);
const email = fc.oneof(
  fc.emailAddress(),
  fc.constantFrom(' Ann@Example.COM ', 'a@b', 'ǅ@x.test', 'a@xn--80ak6aa92e.test', 'a"b@x.test'),
  text,
);
const phone = fc.oneof(
  fc.constantFrom('+14155552671', '+1415555267', '+999999999999999', '+0', '+٤١٥٥٥٥٢٦٧١'),
  fc.stringMatching(/^\+[1-9][0-9]{1,15}$/),
  text,
);
const number = fc.oneof(
  fc.double(),
  fc.constantFrom(0, -0, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, Number.MAX_VALUE, 5e-324, 1e308),
  fc.integer(),
);

/** A record the record schema may or may not accept, with the odd corners of each member type. */
const record = fc.record(
  {
    email,
    phone_number: fc.option(phone),
    preferred_username: fc.option(text),
    name: fc.option(text),
    address: fc.option(fc.record({ formatted: text, country: text }, { requiredKeys: [] })),
    account_valid_from: fc.option(time),
    account_valid_until: fc.option(time),
    password: fc.record(
      {
        type: fc.constant('bcrypt'),
        password_hash: fc.constantFrom(HASH, '$2b$99$x', 'x'),
        expire_after: time,
      },
      { requiredKeys: ['type', 'password_hash'] },
    ),
    custom_attributes: fc.record({ score: fc.oneof(number, text), level: number }, { requiredKeys: [] }),
    identities: fc.array(
      fc.record({
        type: fc.constant('oauth'),
        oauth: fc.record({
          provider_alias: fc.constantFrom('google', 'unknown'),
          provider_type: fc.constant('google'),
          provider_subject_id: text,
          user_profile: fc.dictionary(text, fc.jsonValue(), { maxKeys: 3 }),
        }),
      }),
      { maxLength: 2 },
    ),
    mfa: fc.record(
      {
        email: fc.option(email),
        phone_number: fc.option(phone),
        totp: fc.record({ secret: fc.constantFrom('JBSWY3DPEHPK3PXP', 'A') }),
      },
      { requiredKeys: [] },
    ),
    disabled: fc.boolean(),
    roles: fc.uniqueArray(fc.constantFrom('admin', 'nobody'), { maxLength: 2 }),
  },
  { requiredKeys: ['email'] },
);

/**
 * No record's content can take a process down: records the schema accepts, with the odd corners
 * of times, phones, emails, Unicode, numbers at their bounds and nested objects, are each applied
 * or failed alone, on the import and on the dry run; the workers then go on with the next import.
 */
describe('import of odd records: each is applied or fails alone, and the workers stay up', function () {
  this.timeout(300_000);
  const service = useImportService(
    'postgres',
    {
      login_id_keys: [{ key: 'email' }, { key: 'phone' }, { key: 'username' }],
      custom_attributes: [
        { name: 'score', type: 'number' },
        { name: 'level', type: 'integer' },
      ],
      oauth_providers: [{ alias: 'google', type: 'google' }],
    },
    { import_batch_size: 7 },
  );
  const acceptedBySchema = importRecordValidator('email');

  /** Imports the records and checks every one has its own outcome; returns the details. */
  async function importAlone(records: unknown[], dryRun: boolean): Promise<Detail[]> {
    const status = await service.run({ identifier: 'email', upsert: true, dry_run: dryRun, records });
    expect(status.failed_at, JSON.stringify(status.error)).to.equal(undefined);
    const details = status.details as Detail[];
    expect(details.map((d) => d.index)).to.deep.equal(records.map((_, i) => i));
    const outcomes = dryRun
      ? ['would_insert', 'would_update', 'would_skip', 'failed']
      : ['inserted', 'updated', 'failed'];
    for (const detail of details) {
      expect(outcomes).to.include(detail.outcome);
      if (detail.outcome === 'failed') expect(detail.errors).to.have.length.above(0);
    }
    return details;
  }

  it('fails a leap second or an hour-only offset in each time member alone, around valid records', async () => {
    const bad = [
      { account_valid_from: '2016-12-31T23:59:60Z' },
      { account_valid_until: '2030-01-01T00:00:00+01' },
      { password: { type: 'bcrypt', password_hash: HASH, expire_after: '2016-12-31T23:59:60Z' } },
    ];
    const records = bad.flatMap((member, n) => [
      { email: `before${n}@odd.test` },
      { email: `bad${n}@odd.test`, ...member },
    ]);
    records.push({ email: 'last@odd.test' });
    for (const dryRun of [true, false]) {
      const details = await importAlone(records, dryRun);
      const failed = details.filter((d) => d.outcome === 'failed').map((d) => d.index);
      expect(failed, dryRun ? 'dry run' : 'import').to.deep.equal([1, 3, 5]);
      for (const index of failed) expect(details[index]?.errors?.[0]?.reason).to.equal('ValidationFailed');
    }
  });

  it('applies or fails alone every record of any shape, on the import and on the dry run', async () => {
    let runs = 0;
    let schemaAccepted = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(record, { minLength: 1, maxLength: 12 }),
        fc.boolean(),
        async (records, dryRun) => {
          runs += 1;
          schemaAccepted += records.filter((r) => acceptedBySchema(r)).length;
          await importAlone(records, dryRun);
        },
      ),
      { numRuns: 24, endOnFailure: true },
    );
    expect(runs).to.equal(24);
    expect(schemaAccepted, 'records that passed the schema and reached the later checks').to.be.above(0);
  });
});
