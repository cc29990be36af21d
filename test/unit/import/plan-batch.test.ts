import { expect } from 'chai';
import { configFromDocument } from '../../../pipeline/config.js';
import { type BatchState, type ImportOptions, ownerKey } from '../../../pipeline/import/import-batch.js';
import { importedUserIds } from '../../../pipeline/import/imported-user-id.js';
import { planBatch } from '../../../pipeline/import/plan-batch.js';
import { redactRecord } from '../../../pipeline/import/secret-members.js';
import type { UserState } from '../../../pipeline/import/user-state.js';
import { prepareRecord, recordValidator } from '../../../pipeline/import/validate-record.js';

const project = configFromDocument({
  project: { custom_attributes: [{ name: 'tier', type: 'string' }] },
}).project;
const options = (upsert: boolean): ImportOptions => ({
  identifier: 'email',
  upsert,
  recordChanges: false,
  lockUsers: true,
  userIdOf: importedUserIds('userimport_TEST'),
  replayed: false,
  project,
  validate: recordValidator('email', project),
});

function existingUser(): UserState {
  return {
    id: 'u-1',
    standard: { email: 'old@example.com', name: 'Old' },
    custom: { tier: 'gold' },
    disabled: true,
    loginIds: new Map([['email', { id: 'i-1', value: 'old@example.com', original: 'old@example.com' }]]),
    oauth: new Map(),
    verified: new Set(),
    mfaEmail: undefined,
    mfaPhone: undefined,
    roles: new Set(['r']),
    groups: new Set(),
    validFrom: '2026-01-01T00:00:00.000Z',
    validUntil: null,
    secrets: { totpSecrets: [] },
  };
}

const state = (): BatchState => ({
  owners: new Map([[ownerKey('email', 'old@example.com'), 'u-1']]),
  users: new Map([['u-1', existingUser()]]),
  takenIds: new Set(),
  roleIds: new Map([['r', '00000000-0000-4000-8000-000000000001']]),
  groupIds: new Map(),
});

const plan = (raws: unknown[], upsert: boolean) =>
  planBatch(
    raws.map((raw, index) => prepareRecord({ index, raw }, options(upsert).validate)),
    state(),
    options(upsert),
  );

describe('import/plan-batch', () => {
  it('plans an insert and leaves the loaded state untouched', () => {
    const loaded = state();
    const result = planBatch(
      [prepareRecord({ index: 0, raw: { email: 'New@Example.com' } }, options(false).validate)],
      loaded,
      options(false),
    );
    expect(result.details).to.have.length(1);
    expect(result.details[0]).to.deep.include({ index: 0, outcome: 'inserted' });
    const [change] = [...result.changed.values()];
    expect(change?.before).to.equal(undefined);
    expect(change?.after.standard).to.deep.equal({ email: 'new@example.com' });
    expect(loaded.users.get('u-1')).to.deep.equal(existingUser());
  });

  it('updates only what the record names (decisions 3.2)', () => {
    const result = plan(
      [{ email: 'OLD@example.com', name: null, custom_attributes: { tier: 'silver' } }],
      true,
    );
    const after = result.changed.get('u-1')?.after;
    expect(after?.standard).to.deep.equal({ email: 'old@example.com' });
    expect(after?.custom).to.deep.equal({ tier: 'silver' });
    expect(after?.disabled).to.equal(true);
    expect([...(after?.roles ?? [])]).to.deep.equal(['r']);
  });

  it("keeps, sets or removes each bound of the account's period, read as UTC, and fails one that ends before it begins", () => {
    const kept = plan([{ email: 'old@example.com', account_valid_until: '2027-06-01T12:00:00+02:00' }], true);
    expect(kept.changed.get('u-1')?.after).to.deep.include({
      validFrom: '2026-01-01T00:00:00.000Z',
      validUntil: '2027-06-01T10:00:00.000Z',
    });
    const removed = plan([{ email: 'old@example.com', account_valid_from: null }], true);
    expect(removed.changed.get('u-1')?.after).to.deep.include({ validFrom: null, validUntil: null });
    // The record's own period, and the period it leaves with the bound the user kept.
    for (const record of [
      {
        email: 'new@example.com',
        account_valid_from: '2026-02-01T00:00:00Z',
        account_valid_until: '2026-01-01T00:00:00Z',
      },
      { email: 'old@example.com', account_valid_until: '2025-12-31T23:59:59Z' },
    ]) {
      const failed = plan([record], true);
      expect(failed.details[0]?.outcome, JSON.stringify(record)).to.equal('failed');
      expect(failed.details[0]?.errors?.[0]).to.deep.include({ reason: 'ValidationFailed' });
      expect(JSON.stringify(failed.details[0]?.errors)).to.include('/account_valid_until');
      expect(failed.changed.size).to.equal(0);
    }
    expect(
      plan([{ email: 'x@example.com', account_valid_from: 'tomorrow' }], true).details[0]?.outcome,
    ).to.equal('failed');
  });

  it('records no change when an update changes nothing', () => {
    const result = plan([{ email: 'old@example.com', name: 'Old' }], true);
    expect(result.details[0]).to.deep.include({ outcome: 'updated', user_id: 'u-1' });
    expect(result.changed.size).to.equal(0);
  });

  it('skips without upsert and fails a record without touching the state', () => {
    const skipped = plan([{ email: 'old@example.com', name: 'X' }], false);
    expect(skipped.details[0]).to.deep.include({ outcome: 'skipped', user_id: 'u-1' });
    expect(skipped.changed.size).to.equal(0);
    const failed = plan([{ email: 'old@example.com', roles: ['missing'] }], true);
    expect(failed.details[0]?.outcome).to.equal('failed');
    expect(failed.changed.size).to.equal(0);
  });

  it('lets a later record see an earlier one: a username claimed by the first is taken for the second', () => {
    const result = plan(
      [
        { email: 'old@example.com', preferred_username: 'keeper' },
        { email: 'fresh@example.com', preferred_username: 'KEEPER' },
      ],
      true,
    );
    expect(result.details.map((d) => d.outcome)).to.deep.equal(['updated', 'failed']);
    expect(result.details[1]?.errors?.[0]).to.deep.include({ reason: 'DuplicatedIdentity' });
  });
});

describe('import/redact', () => {
  it('replaces every secret wherever it is, and nothing else', () => {
    const record = {
      email: 'a@example.com',
      password: { type: 'bcrypt', password_hash: 'h1' },
      mfa: {
        email: 'm@example.com',
        password: { type: 'bcrypt', password_hash: 'h2' },
        totp: { secret: 's' },
      },
    };
    expect(redactRecord(record)).to.deep.equal({
      email: 'a@example.com',
      password: { type: 'bcrypt', password_hash: 'REDACTED' },
      mfa: {
        email: 'm@example.com',
        password: { type: 'bcrypt', password_hash: 'REDACTED' },
        totp: { secret: 'REDACTED' },
      },
    });
    expect(record.password.password_hash).to.equal('h1');
    expect(redactRecord('not an object')).to.equal('not an object');
  });
});
