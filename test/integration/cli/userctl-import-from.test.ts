import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { hash as argon2Hash } from '@node-rs/argon2';
import { expect } from 'chai';
import { verifyPassword } from '../../../pipeline/passwords/verify-password.js';
import { useApiProcess } from '../../support/api-process.js';
import { useTestSchema } from '../../support/database.js';
import { FIREBASE_FLAGS } from '../../support/password-vectors.js';
import { userctl } from '../../support/userctl.js';
import { passwordHashOf } from '../../support/users.js';

interface ResultLine {
  position: number;
  outcome: string;
  user_id?: string;
  warnings?: { message: string }[];
  unmapped?: string[];
}

const readResults = (file: string): ResultLine[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as ResultLine);

// Sample files in the shapes each system writes (issue: migrations without loss, D).
const AUTH0_USERS = [
  {
    user_id: 'auth0|5f1c0e',
    email: 'ana@auth0.test',
    email_verified: true,
    username: 'ana',
    given_name: 'Ana',
    family_name: 'Silva',
    name: 'Ana Silva',
    blocked: true,
    password_hash: '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW',
    mfa_factors: [{ totp: { secret: 'JBSWY3DPEHPK3PXP' } }, { phone: { value: '+14155550123' } }],
    user_metadata: { plan: 'pro' },
    app_metadata: { roles: ['admin'] },
    logins_count: 12,
    identities: [
      { provider: 'auth0', user_id: '5f1c0e', connection: 'Username-Password-Authentication' },
      { provider: 'google-oauth2', user_id: '109876543210', connection: 'google-oauth2', isSocial: true },
      { provider: 'samlp', user_id: 'ana@corp', connection: 'corp-saml', isSocial: false },
    ],
  },
  {
    // Auth0's bulk-import custom_password_hash: salted SHA-256 (FIPS 180-2 "abc": salt "a" first).
    email: 'ben@auth0.test',
    custom_password_hash: {
      algorithm: 'sha256',
      hash: { value: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad', encoding: 'hex' },
      salt: { value: 'a', position: 'prefix' },
    },
  },
];

const FIREBASE_EXPORT = {
  users: [
    {
      localId: 'Ek8vL0',
      email: 'cara@firebase.test',
      emailVerified: true,
      displayName: 'Cara Diaz',
      photoUrl: 'https://example.com/cara.png',
      passwordHash:
        'lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==',
      salt: '42xEC+ixf3L2lw==',
      createdAt: '1700000000000',
      lastSignedInAt: '1700000500000',
      providerUserInfo: [
        { providerId: 'password', rawId: 'cara@firebase.test' },
        { providerId: 'google.com', rawId: '1098', email: 'cara@gmail.com' },
      ],
      mfaInfo: [{ phoneInfo: '+14155550177', mfaEnrollmentId: 'x1' }],
      disabled: false,
    },
  ],
};

// Clerk's Dashboard export, with the columns its documentation and migration tools name.
const CLERK_CSV = [
  'id,first_name,last_name,username,primary_email_address,primary_phone_number,verified_email_addresses,unverified_email_addresses,verified_phone_numbers,unverified_phone_numbers,totp_secret,password_digest,password_hasher',
  'user_2a,Eve,Kim,evek,eve@clerk.test,+14155550199,eve@clerk.test|eve@work.test,,+14155550199,,JBSWY3DPEHPK3PXP,$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW,bcrypt',
  'user_2b,Finn,,,finn@clerk.test,,,finn@clerk.test,,,,,',
  'user_2c,Gus,,,gus@clerk.test,,gus@clerk.test,,,,,c2NyeXB0,scrypt_werkzeug',
].join('\n');

const COGNITO_CSV = [
  'cognito:username,name,given_name,family_name,email,email_verified,phone_number,phone_number_verified,address,custom:tier,cognito:mfa_enabled,updated_at',
  'dan-1,Dan Evans,Dan,Evans,dan@cognito.test,true,+14155550188,false,"1 Main St, Springfield",gold,false,1700000000',
].join('\n');

describe('userctl import --from auth0|firebase|cognito', function () {
  this.timeout(120_000);
  const db = useTestSchema();
  const api = useApiProcess(() => db.schema);
  const dir = mkdtempSync(path.join(tmpdir(), 'userctl-from-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const env = () => ({ DATA_DIR: api().dataDir });

  const passwordOf = (email: string) => passwordHashOf(db(), email);

  it('maps an Auth0 export, its hashes and factors, and lists the members it leaves out', async () => {
    const file = path.join(dir, 'auth0.ndjson');
    writeFileSync(file, AUTH0_USERS.map((u) => JSON.stringify(u)).join('\n'));
    // Roles (app_metadata) and a SAML identity would be lost: the run stops before any request.
    const refused = await userctl(['import', file, '--from', 'auth0'], env());
    expect(refused.code, refused.stderr).to.equal(2);
    expect(refused.stderr.trim()).to.equal(
      'userctl: import would lose app_metadata (1 records), identities/* (1 records): ' +
        '--plan shows every member; --allow-loss FIELD accepts the loss of one',
    );
    expect((await db().query('SELECT 1 FROM users')).rowCount, 'nothing was sent').to.equal(0);
    const plan = await userctl(['import', file, '--from', 'auth0', '--plan'], env());
    expect(plan.code, plan.stderr).to.equal(0);
    const planLines = plan.stdout.split('\n');
    expect(planLines[0]).to.equal(`plan of ${file} (--from auth0): 2 records`);
    const row = (field: string) =>
      planLines
        .find((l) => l.trim().startsWith(`${field} `))
        ?.trim()
        .split(/\s{2,}/);
    expect(row('email')).to.deep.equal(['email', '2', 'kept']);
    expect(row('identities')).to.deep.equal(['identities', '1', 'kept']);
    expect(row('identities/*')).to.deep.equal(['identities/*', '1', 'dropped (stops the run: --allow-loss)']);
    expect(row('logins_count')).to.deep.equal(['logins_count', '1', 'dropped']);
    const run = await userctl(
      ['import', file, '--from', 'auth0', '--allow-loss', 'app_metadata', '--allow-loss', 'identities/*'],
      env(),
    );
    // Every record succeeded, some with source members left out: exit 3, counted on the closing line.
    expect(run.code, run.stderr).to.equal(3);
    expect(run.stderr).to.match(/; [\d,]+ warnings, [1-9][\d,]* records with unmapped members; /);
    const results = readResults(`${file}.results.ndjson`);
    expect(results.map((r) => r.outcome)).to.deep.equal(['inserted', 'inserted']);
    // Auth0's database identity is the user itself, Google's a connection; SAML has no place here.
    expect(results[0]?.unmapped).to.deep.equal(['user_id', 'app_metadata', 'logins_count', 'identities/2']);
    expect(results[0]?.warnings?.map((w) => w.message)).to.include('custom_attributes.plan is not defined.');
    expect(results[1]?.unmapped).to.equal(undefined);
    const { rows } = await db().query(
      `SELECT u.is_disabled, u.standard_attributes->>'preferred_username' AS username,
              (SELECT count(*)::int FROM authenticators a WHERE a.user_id = u.id AND a.type IN ('totp', 'oob_otp_sms')) AS factors
         FROM users u WHERE u.standard_attributes->>'email' = 'ana@auth0.test'`,
    );
    expect(rows[0]).to.deep.equal({ is_disabled: true, username: 'ana', factors: 2 });
    const google = await db().query(
      `SELECT u.standard_attributes->>'email' AS email FROM identities i JOIN users u ON u.id = i.user_id
        WHERE i.type = 'oauth' AND i.provider_alias = 'google' AND i.provider_subject_id = '109876543210'`,
    );
    expect(google.rows, 'the Google login, found by its subject').to.deep.equal([
      { email: 'ana@auth0.test' },
    ]);
    expect(await verifyPassword(await passwordOf('ana@auth0.test'), 'U*U')).to.equal(true);
    expect(await verifyPassword(await passwordOf('ben@auth0.test'), 'bc')).to.equal(true);
    expect(await verifyPassword(await passwordOf('ben@auth0.test'), 'abc')).to.equal(false);
  });

  it('joins an Auth0 export job with the password hash file Auth0 support delivers, and reports what did not join', async () => {
    const hash = '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW'; // of "U*U"
    // The export job's lines: no hashes in them.
    const users = [
      { user_id: 'auth0|60425da93519d90068f82966', email: 'oid@hashes.test', name: 'By _id' },
      { user_id: 'auth0|legacy-7', email: 'alt@hashes.test', name: 'By alt_id' },
      { user_id: 'auth0|60425da93519d90068f82999', email: 'nohash@hashes.test', name: 'No hash' },
      { user_id: 'google-oauth2|1098', email: 'social@hashes.test', name: 'Social' },
    ];
    // The hash file's lines, as Auth0 support delivers them (MongoDB extended JSON).
    const hashes = [
      {
        _id: { $oid: '60425da93519d90068f82966' },
        email: 'oid@hashes.test',
        passwordHash: hash,
        connection: 'Username-Password-Authentication',
      },
      {
        _id: { $oid: '60425da93519d90068f82970' },
        alt_id: 'legacy-7',
        email: 'alt@hashes.test',
        passwordHash: hash,
      },
      { _id: { $oid: '60425da93519d90068f82971' }, email: 'gone@hashes.test', passwordHash: hash },
    ];
    const file = path.join(dir, 'auth0-job.ndjson');
    const hashFile = path.join(dir, 'auth0-hashes.ndjson');
    writeFileSync(file, users.map((u) => JSON.stringify(u)).join('\n'));
    writeFileSync(hashFile, hashes.map((h) => JSON.stringify(h)).join('\n'));
    const run = await userctl(['import', file, '--from', 'auth0', '--hashes', hashFile], env());
    // Every record succeeded, some with source members left out: exit 3, counted on the closing line.
    expect(run.code, run.stderr).to.equal(3);
    expect(run.stderr).to.match(/; [\d,]+ warnings, [1-9][\d,]* records with unmapped members; /);
    expect(readResults(`${file}.results.ndjson`).map((r) => r.outcome)).to.deep.equal([
      'inserted',
      'inserted',
      'inserted',
      'inserted',
    ]);
    expect(await verifyPassword(await passwordOf('oid@hashes.test'), 'U*U')).to.equal(true);
    expect(await verifyPassword(await passwordOf('alt@hashes.test'), 'U*U')).to.equal(true);
    expect(await passwordOf('nohash@hashes.test'), 'no hash, no password').to.equal('');
    expect(run.stderr)
      .to.include('auth0 hashes: 2 of 3 joined to their users')
      .and.to.include('auth0 hashes: 1 whose user is not in the file: auth0|60425da93519d90068f82971')
      .and.to.include('auth0 hashes: 1 database users without a hash: auth0|60425da93519d90068f82999');

    // The hash file read as the users file keeps its hashes too.
    const asUsers = await userctl(['import', hashFile, '--from', 'auth0', '--upsert'], env());
    expect(asUsers.code, asUsers.stderr).to.equal(3);
    expect(await verifyPassword(await passwordOf('gone@hashes.test'), 'U*U')).to.equal(true);

    // A hash file that is not one stops the run before any request.
    writeFileSync(hashFile, '{"email":"x@hashes.test"}\n');
    const broken = await userctl(
      ['import', file, '--from', 'auth0', '--hashes', hashFile, '--state', `${file}.b`],
      env(),
    );
    expect(broken.code).to.equal(2);
    expect(broken.stderr).to.include('line 1 is not an Auth0 password hash');
    const stray = await userctl(['import', file, '--from', 'cognito', '--hashes', hashFile], env());
    expect(stray.code).to.equal(2);
    expect(stray.stderr).to.include('--hashes goes with --from auth0');
  });

  it('maps a Firebase auth:export file with the hash parameters given as flags', async () => {
    const file = path.join(dir, 'firebase.json');
    writeFileSync(file, JSON.stringify(FIREBASE_EXPORT));
    const run = await userctl(['import', file, '--from', 'firebase', ...FIREBASE_FLAGS], env());
    // Every record succeeded, some with source members left out: exit 3, counted on the closing line.
    expect(run.code, run.stderr).to.equal(3);
    expect(run.stderr).to.match(/; [\d,]+ warnings, [1-9][\d,]* records with unmapped members; /);
    const [result] = readResults(`${file}.results.ndjson`);
    expect(result?.outcome).to.equal('inserted');
    expect(result?.unmapped).to.deep.equal(['localId', 'createdAt', 'lastSignedInAt']);
    // Firebase's Google sign-in is an OAuth connection, found by its subject.
    const google = await db().query(
      `SELECT u.standard_attributes->>'email' AS email FROM identities i JOIN users u ON u.id = i.user_id
        WHERE i.type = 'oauth' AND i.provider_alias = 'google' AND i.provider_subject_id = '1098'`,
    );
    expect(google.rows).to.deep.equal([{ email: 'cara@firebase.test' }]);
    expect(await verifyPassword(await passwordOf('cara@firebase.test'), 'user1password')).to.equal(true);
    expect(await verifyPassword(await passwordOf('cara@firebase.test'), 'user1password!')).to.equal(false);
    const { rows } = await db().query(
      `SELECT a.phone FROM authenticators a JOIN users u ON u.id = a.user_id
        WHERE a.type = 'oob_otp_sms' AND u.standard_attributes->>'email' = 'cara@firebase.test'`,
    );
    expect(rows).to.deep.equal([{ phone: '+14155550177' }]);
  });

  it('maps a Cognito user CSV: standard attributes, flags, address and custom attributes', async () => {
    const file = path.join(dir, 'cognito.csv');
    writeFileSync(file, COGNITO_CSV);
    // Cognito exports no second factors: a loss accepted by name.
    const run = await userctl(
      ['import', file, '--from', 'cognito', '--allow-loss', 'cognito:mfa_enabled'],
      env(),
    );
    // Every record succeeded, some with source members left out: exit 3, counted on the closing line.
    expect(run.code, run.stderr).to.equal(3);
    expect(run.stderr).to.match(/; [\d,]+ warnings, [1-9][\d,]* records with unmapped members; /);
    const [result] = readResults(`${file}.results.ndjson`);
    expect(result?.outcome).to.equal('inserted');
    expect(result?.unmapped).to.deep.equal(['cognito:username', 'cognito:mfa_enabled', 'updated_at']);
    const { rows } = await db().query(
      `SELECT standard_attributes FROM users WHERE standard_attributes->>'email' = 'dan@cognito.test'`,
    );
    expect(rows[0]?.standard_attributes).to.deep.include({
      name: 'Dan Evans',
      given_name: 'Dan',
      family_name: 'Evans',
      phone_number: '+14155550188',
      address: { formatted: '1 Main St, Springfield' },
    });
  });

  it('maps a Clerk users CSV: login ids and their verification, the bcrypt digest, the TOTP secret; an unknown hasher stops the run', async () => {
    const file = path.join(dir, 'clerk.csv');
    writeFileSync(file, CLERK_CSV);
    // Gus's digest is of a hasher the service does not verify: a credential that would be lost.
    const refused = await userctl(['import', file, '--from', 'clerk'], env());
    expect(refused.code, refused.stderr).to.equal(2);
    expect(refused.stderr).to.include('import would lose password_digest (1 records)');
    const run = await userctl(['import', file, '--from', 'clerk', '--allow-loss', 'password_digest'], env());
    expect(run.code, run.stderr).to.equal(3);
    const results = readResults(`${file}.results.ndjson`);
    expect(results.map((r) => r.outcome)).to.deep.equal(['inserted', 'inserted', 'inserted']);
    expect(results.map((r) => r.unmapped)).to.deep.equal([
      ['id', 'verified_email_addresses'],
      ['id'],
      ['id', 'password_digest'],
    ]);
    const { rows } = await db().query(
      `SELECT u.standard_attributes->>'given_name' AS given, u.standard_attributes->>'preferred_username' AS username,
              EXISTS (SELECT 1 FROM verified_claims v WHERE v.user_id = u.id AND v.name = 'email') AS verified,
              (SELECT count(*)::int FROM authenticators a WHERE a.user_id = u.id AND a.type = 'totp') AS totps
         FROM users u WHERE u.standard_attributes->>'email' IN ('eve@clerk.test', 'finn@clerk.test')
        ORDER BY 1`,
    );
    expect(rows).to.deep.equal([
      { given: 'Eve', username: 'evek', verified: true, totps: 1 },
      { given: 'Finn', username: null, verified: false, totps: 0 },
    ]);
    expect(await verifyPassword(await passwordOf('eve@clerk.test'), 'U*U')).to.equal(true);
    expect(await passwordOf('gus@clerk.test')).to.equal('');
  });

  it('maps a Keycloak users file: pbkdf2-sha256/sha512 and argon2 passwords, OTP secrets, Google logins, realm roles and groups; client roles stop the run', async () => {
    // Credentials as Keycloak stores them: secretData and credentialData are JSON text.
    const pbkdf2 = (password: string, digest: 'sha256' | 'sha512', iterations: number) => {
      const salt = randomBytes(16);
      return {
        type: 'password',
        secretData: JSON.stringify({
          value: pbkdf2Sync(password, salt, iterations, 64, digest).toString('base64'),
          salt: salt.toString('base64'),
          additionalParameters: {},
        }),
        credentialData: JSON.stringify({
          hashIterations: iterations,
          algorithm: `pbkdf2-${digest}`,
          additionalParameters: {},
        }),
      };
    };
    const phc = await argon2Hash('argon-pass', {
      memoryCost: 7168,
      timeCost: 2,
      parallelism: 1,
      algorithm: 2,
    });
    const [, , , , phcSalt = '', phcHash = ''] = phc.split('$');
    const fromPhc = (b64: string) => Buffer.from(b64, 'base64').toString('base64');
    const users = [
      {
        id: 'kc-1',
        username: 'ines',
        email: 'ines@keycloak.test',
        emailVerified: true,
        firstName: 'Ines',
        enabled: true,
        createdTimestamp: 1700000000000,
        credentials: [
          pbkdf2('s256-pass', 'sha256', 27500),
          {
            type: 'otp',
            secretData: '{"value":"12345678901234567890"}',
            credentialData: '{"subType":"totp","digits":6,"period":30,"algorithm":"HmacSHA1"}',
          },
        ],
        federatedIdentities: [{ identityProvider: 'google', userId: '4242', userName: 'ines@gmail.com' }],
        realmRoles: ['default-roles-acme'],
        attributes: { tier: ['gold'] },
      },
      {
        id: 'kc-2',
        username: 'jon',
        email: 'jon@keycloak.test',
        enabled: false,
        credentials: [pbkdf2('s512-pass', 'sha512', 210000)],
        realmRoles: ['default-roles-acme', 'auditor'],
        clientRoles: { account: ['manage-account'] },
        groups: ['/staff'],
      },
      {
        id: 'kc-3',
        username: 'kai',
        email: 'kai@keycloak.test',
        credentials: [
          {
            type: 'password',
            secretData: JSON.stringify({ value: fromPhc(phcHash), salt: fromPhc(phcSalt) }),
            credentialData: JSON.stringify({
              hashIterations: 2,
              algorithm: 'argon2',
              additionalParameters: {
                type: ['id'],
                version: ['1.3'],
                memory: ['7168'],
                iterations: ['2'],
                parallelism: ['1'],
                hashLength: ['32'],
              },
            }),
          },
        ],
      },
    ];
    const file = path.join(dir, 'acme-users-0.json');
    writeFileSync(file, JSON.stringify({ realm: 'acme', users }));
    const refused = await userctl(['import', file, '--from', 'keycloak'], env());
    expect(refused.code, refused.stderr).to.equal(2);
    expect(refused.stderr).to.include('clientRoles (1 records)');
    expect(refused.stderr).not.to.include('realmRoles');
    const run = await userctl(['import', file, '--from', 'keycloak', '--allow-loss', 'clientRoles'], env());
    // The realm role and group are kept, and the project has neither: that record fails alone.
    expect(run.code, run.stderr).to.equal(1);
    const results = readResults(`${file}.results.ndjson`) as (ResultLine & {
      errors?: { reason?: string }[];
    })[];
    expect(results.map((r) => r.outcome)).to.deep.equal(['inserted', 'failed', 'inserted']);
    expect(results[1]?.errors?.map((e) => e.reason)).to.deep.equal(['RoleUnknownKeys']);
    expect(results.map((r) => r.unmapped)).to.deep.equal([
      ['id', 'createdTimestamp'],
      ['id', 'clientRoles'],
      ['id'],
    ]);
    expect(await verifyPassword(await passwordOf('ines@keycloak.test'), 's256-pass')).to.equal(true);
    expect(await verifyPassword(await passwordOf('kai@keycloak.test'), 'argon-pass')).to.equal(true);
    expect(await verifyPassword(await passwordOf('kai@keycloak.test'), 'argon-pass!')).to.equal(false);
    // With --create-roles the run makes the role and the group first, and the record goes in.
    const again = await userctl(
      [
        'import',
        file,
        '--from',
        'keycloak',
        '--allow-loss',
        'clientRoles',
        '--create-roles',
        '--upsert',
        '--results',
        `${file}.2.ndjson`,
        '--state',
        `${file}.2.state`,
      ],
      env(),
    );
    expect(again.code, again.stderr).to.equal(3);
    expect(again.stderr).to.include('2 roles and groups made');
    expect(await verifyPassword(await passwordOf('jon@keycloak.test'), 's512-pass')).to.equal(true);
    const { rows } = await db().query(
      `SELECT u.is_disabled,
              (SELECT a.totp_secret FROM authenticators a WHERE a.user_id = u.id AND a.type = 'totp') AS totp,
              (SELECT i.provider_subject_id FROM identities i WHERE i.user_id = u.id AND i.type = 'oauth' AND i.provider_alias = 'google') AS google,
              (SELECT array_agg(r.key) FROM user_roles ur JOIN roles r ON r.id = ur.role_id WHERE ur.user_id = u.id) AS roles,
              (SELECT array_agg(g.key) FROM user_groups ug JOIN groups g ON g.id = ug.group_id WHERE ug.user_id = u.id) AS groups
         FROM users u WHERE u.standard_attributes->>'email' IN ('ines@keycloak.test', 'jon@keycloak.test') ORDER BY u.standard_attributes->>'email'`,
    );
    // RFC 6238's test secret "12345678901234567890" in base32, as authenticator apps read it; the
    // realm's default role is no role of the user's own.
    expect(rows).to.deep.equal([
      {
        is_disabled: false,
        totp: 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ',
        google: '4242',
        roles: null,
        groups: null,
      },
      { is_disabled: true, totp: null, google: null, roles: ['auditor'], groups: ['staff'] },
    ]);
  });

  it('refuses a system it does not know and hash flags without --from firebase', async () => {
    const file = path.join(dir, 'x.ndjson');
    writeFileSync(file, '{}');
    const unknown = await userctl(['import', file, '--from', 'okta'], env());
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.include('--from must be one of auth0, firebase, cognito, clerk, keycloak');
    const stray = await userctl(['import', file, '--from', 'auth0', '--rounds', '8'], env());
    expect(stray.code).to.equal(2);
  });
});
