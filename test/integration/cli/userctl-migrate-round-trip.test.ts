import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { connect } from '../../../cli/service-client.js';
import { verifyPassword } from '../../../pipeline/passwords/verify-password.js';
import { useApiProcess } from '../../support/api-process.js';
import { testBlobConnectionString, uniqueContainer } from '../../support/blob-containers.js';
import { useTestSchema } from '../../support/database.js';
import { FIREBASE_FLAGS } from '../../support/password-vectors.js';
import { userctl } from '../../support/userctl.js';
import { passwordHashOf } from '../../support/users.js';

interface ExportedUser {
  sub: string;
  email?: string;
  disabled?: boolean;
  roles?: string[];
  groups?: string[];
  custom_attributes?: Record<string, unknown>;
  identities?: { oauth?: { provider_alias: string; provider_subject_id: string } }[];
}

const lines = <T>(file: string): T[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);

/** The OAuth connections of an exported user, as `alias:subject`. */
const connections = (user: ExportedUser | undefined) =>
  (user?.identities ?? []).flatMap((i) =>
    i.oauth ? [`${i.oauth.provider_alias}:${i.oauth.provider_subject_id}`] : [],
  );

// Each system's files as its documentation shows them, imported with the run's mapping, read back
// through the API and an export, and compared member by member with the source.
describe('userctl import --from: the source read back through lookups and an export', function () {
  this.timeout(120_000);
  const dir = mkdtempSync(path.join(tmpdir(), 'userctl-round-trip-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  // The project declares where the source ids and signup times go, and a provider of its own type.
  const projectFile = path.join(dir, 'project.json');
  writeFileSync(
    projectFile,
    JSON.stringify({
      custom_attributes: [
        { name: 'source_user_id', type: 'string' },
        { name: 'signed_up_at', type: 'string' },
        { name: 'tier', type: 'string' },
      ],
      oauth_providers: [
        { alias: 'google', type: 'google' },
        { alias: 'facebook', type: 'facebook' },
        { alias: 'corp', type: 'azureadv2' },
      ],
    }),
  );
  const db = useTestSchema();
  const api = useApiProcess(() => db.schema, {
    PROJECT_CONFIG: projectFile,
    AZURE_STORAGE_CONNECTION_STRING: testBlobConnectionString(),
    AZURE_STORAGE_CONTAINER: uniqueContainer(),
  });
  const env = () => ({ DATA_DIR: api().dataDir });

  const passwordOf = (email: string) => passwordHashOf(db(), email);
  /** The id of the user `getUserByOAuth(alias, subject)` finds, or null. */
  const byOAuth = async (alias: string, subject: string): Promise<string | null> => {
    const client = await connect({ dataDir: api().dataDir });
    try {
      const query = `{ getUserByOAuth(oauthProviderAlias: ${JSON.stringify(alias)}, oauthProviderUserID: ${JSON.stringify(subject)}) { id } }`;
      const answer = await client.call<{ data?: { getUserByOAuth: { id: string } | null } }>(
        'POST',
        '/_api/admin/graphql',
        JSON.stringify({ query }),
      );
      return answer.body.data?.getUserByOAuth?.id ?? null;
    } finally {
      await client.close();
    }
  };
  /** Every user as an ndjson export writes it, by email. */
  const exported = async (): Promise<Map<string, ExportedUser>> => {
    const file = path.join(dir, `export-${Date.now()}.ndjson`);
    const run = await userctl(['export', '--format', 'ndjson', '-o', file], env());
    expect(run.code, run.stderr).to.equal(0);
    return new Map(lines<ExportedUser>(file).map((u) => [u.email ?? u.sub, u]));
  };

  it('Auth0: an export job with its hash file, roles from app_metadata, a provider of the project, the Auth0 id and signup time', async () => {
    const hash = '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW'; // of "U*U"
    const users = [
      {
        user_id: 'auth0|60425da93519d90068f82966',
        email: 'ana@round.test',
        created_at: '2021-03-05T16:45:29.471Z',
        blocked: true,
        user_metadata: { tier: 'gold' },
        app_metadata: { roles: ['admin', 'billing-viewer'], plan: 'pro' },
        identities: [
          {
            provider: 'auth0',
            user_id: '60425da93519d90068f82966',
            connection: 'Username-Password-Authentication',
          },
          { provider: 'waad', user_id: 'ana@corp.test', connection: 'corp' },
        ],
      },
      {
        // A social-only user: no hash, one Google login.
        user_id: 'google-oauth2|1098765',
        email: 'bo@round.test',
        created_at: '2022-01-01T00:00:00.000Z',
        identities: [
          { provider: 'google-oauth2', user_id: '1098765', connection: 'google-oauth2', isSocial: true },
        ],
      },
    ];
    const file = path.join(dir, 'auth0.ndjson');
    const hashFile = path.join(dir, 'auth0-hashes.ndjson');
    writeFileSync(file, users.map((u) => JSON.stringify(u)).join('\n'));
    writeFileSync(
      hashFile,
      `${JSON.stringify({ _id: { $oid: '60425da93519d90068f82966' }, passwordHash: hash })}\n`,
    );
    const mapping = [
      '--from',
      'auth0',
      '--hashes',
      hashFile,
      '--roles-from',
      'app_metadata/roles',
      '--provider',
      'waad=corp:azureadv2',
      '--attribute',
      'user_id=source_user_id',
      '--attribute',
      'created_at=signed_up_at',
    ];
    // What is left of app_metadata once its roles are taken still stops the run, member by member.
    const refused = await userctl(['import', file, ...mapping], env());
    expect(refused.code, refused.stderr).to.equal(2);
    expect(refused.stderr).to.include('import would lose app_metadata/plan (1 records):');
    const plan = await userctl(['import', file, ...mapping, '--plan'], env());
    expect(plan.stdout).to.include(
      'roles the records give (each must exist in the project, or --create-roles makes it): admin (1), billing_viewer (1)',
    );
    const run = await userctl(
      ['import', file, ...mapping, '--allow-loss', 'app_metadata', '--create-roles'],
      env(),
    );
    expect(run.code, run.stderr).to.be.oneOf([0, 3]);
    expect(lines<{ outcome: string }>(`${file}.results.ndjson`).map((r) => r.outcome)).to.deep.equal([
      'inserted',
      'inserted',
    ]);

    expect(await verifyPassword(await passwordOf('ana@round.test'), 'U*U')).to.equal(true);
    const all = await exported();
    const ana = all.get('ana@round.test');
    const bo = all.get('bo@round.test');
    expect(ana?.disabled).to.equal(true);
    expect(ana?.roles?.sort()).to.deep.equal(['admin', 'billing_viewer']);
    expect(ana?.custom_attributes).to.deep.equal({
      tier: 'gold',
      source_user_id: 'auth0|60425da93519d90068f82966',
      signed_up_at: '2021-03-05T16:45:29.471Z',
    });
    expect(connections(ana)).to.deep.equal(['corp:ana@corp.test']);
    expect(connections(bo)).to.deep.equal(['google:1098765']);
    expect(bo?.custom_attributes).to.deep.equal({
      source_user_id: 'google-oauth2|1098765',
      signed_up_at: '2022-01-01T00:00:00.000Z',
    });
    expect(await byOAuth('google', '1098765')).to.equal(bo?.sub);
    expect(await byOAuth('corp', 'ana@corp.test')).to.equal(ana?.sub);
  });

  it('Cognito: list-users JSON, each Google_ user merged into the user of its email, Cognito sub and creation date kept', async () => {
    const attributes = (pairs: Record<string, string>) =>
      Object.entries(pairs).map(([Name, Value]) => ({ Name, Value }));
    const listUsers = {
      Users: [
        {
          Username: 'Google_111',
          Attributes: attributes({
            sub: 'aaaa-1',
            email: 'dan@round.test',
            identities: JSON.stringify([
              {
                userId: '111',
                providerName: 'Google',
                providerType: 'Google',
                issuer: null,
                primary: true,
                dateCreated: 1700000000000,
              },
            ]),
          }),
          UserCreateDate: '2024-01-15T10:20:30.123000+00:00',
          Enabled: true,
          UserStatus: 'EXTERNAL_PROVIDER',
        },
        {
          Username: 'dan',
          Attributes: attributes({
            sub: 'aaaa-2',
            email: 'dan@round.test',
            email_verified: 'true',
            'custom:tier': 'silver',
          }),
          UserCreateDate: '2023-06-01T08:00:00+00:00',
          Enabled: false,
          UserStatus: 'CONFIRMED',
        },
        {
          Username: 'Facebook_222',
          Attributes: attributes({
            sub: 'aaaa-3',
            email: 'lee@round.test',
            identities: JSON.stringify([
              { userId: '222', providerName: 'Facebook', providerType: 'Facebook', primary: true },
            ]),
          }),
          UserCreateDate: '2024-02-01T00:00:00+00:00',
          Enabled: true,
          UserStatus: 'EXTERNAL_PROVIDER',
        },
      ],
    };
    const file = path.join(dir, 'cognito.json');
    writeFileSync(file, JSON.stringify(listUsers));
    const run = await userctl(
      [
        'import',
        file,
        '--from',
        'cognito',
        '--attribute',
        'sub=source_user_id',
        '--attribute',
        'UserCreateDate=signed_up_at',
      ],
      env(),
    );
    expect(run.stderr).to.include('Cognito exports no password hashes, groups or TOTP secrets');
    expect(run.code, run.stderr).to.be.oneOf([0, 3]);
    const results = lines<{ position: number; outcome: string; merged_into?: number }>(
      `${file}.results.ndjson`,
    );
    expect(results).to.deep.include({ position: 0, outcome: 'skipped', merged_into: 1 });
    expect(results.filter((r) => r.position > 0).map((r) => r.outcome)).to.deep.equal([
      'inserted',
      'inserted',
    ]);

    const all = await exported();
    const dan = all.get('dan@round.test');
    const lee = all.get('lee@round.test');
    expect(dan?.disabled).to.equal(true);
    expect(connections(dan)).to.deep.equal(['google:111']);
    expect(dan?.custom_attributes).to.deep.equal({
      tier: 'silver',
      source_user_id: 'aaaa-2',
      signed_up_at: '2023-06-01T08:00:00.000Z',
    });
    expect(connections(lee)).to.deep.equal(['facebook:222']);
    expect(await byOAuth('google', '111')).to.equal(dan?.sub);
    expect(await byOAuth('facebook', '222')).to.equal(lee?.sub);
  });

  it("Firebase: auth:export CSV (no header), the project's hash parameters, Google sign-ins, creation time", async () => {
    const row = new Array(26).fill('');
    row[0] = 'Ek8vL0';
    row[1] = 'cara@round.test';
    row[2] = 'true';
    row[3] = 'lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==';
    row[4] = '42xEC+ixf3L2lw==';
    row[5] = 'Cara Diaz';
    row[7] = '1098';
    row[8] = 'cara@gmail.com';
    row[23] = '1700000000000';
    const file = path.join(dir, 'firebase.csv');
    writeFileSync(file, `${row.join(',')}\n`);
    const run = await userctl(
      [
        'import',
        file,
        '--from',
        'firebase',
        '--attribute',
        'localId=source_user_id',
        '--attribute',
        'createdAt=signed_up_at',
        ...FIREBASE_FLAGS,
      ],
      env(),
    );
    expect(run.code, run.stderr).to.be.oneOf([0, 3]);
    expect(await verifyPassword(await passwordOf('cara@round.test'), 'user1password')).to.equal(true);
    const cara = (await exported()).get('cara@round.test');
    expect(connections(cara)).to.deep.equal(['google:1098']);
    expect(cara?.custom_attributes).to.deep.equal({
      source_user_id: 'Ek8vL0',
      signed_up_at: '2023-11-14T22:13:20.000Z',
    });
    expect(await byOAuth('google', '1098')).to.equal(cara?.sub);
  });
});
