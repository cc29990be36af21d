import { expect } from 'chai';
import { auth0CsvUser, fromAuth0 } from '../../../records/from/auth0.js';
import { cognitoRow } from '../../../records/from/cognito.js';
import { CognitoMerge } from '../../../records/from/cognito-merge.js';
import { applyMapping, keyOf, providerAliases } from '../../../records/from/source-mapping.js';

describe("userctl import --from: each tenant's own places", () => {
  it("reads Auth0's export CSV: the formula guard taken off, booleans, metadata columns nested", () => {
    const user = auth0CsvUser({
      user_id: "'auth0|61a",
      email: "'=cmd@example.com",
      email_verified: 'true',
      blocked: 'false',
      'user_metadata.tier': "'gold",
      'app_metadata.roles': '["admin","ops"]',
      'identities[0].connection': "'Username-Password-Authentication",
      name: '',
    });
    expect(user).to.deep.equal({
      user_id: 'auth0|61a',
      email: '=cmd@example.com',
      email_verified: true,
      blocked: false,
      user_metadata: { tier: 'gold' },
      app_metadata: { roles: ['admin', 'ops'] },
      'identities[0].connection': 'Username-Password-Authentication',
    });
  });

  it('takes roles from the member a tenant names and lists the rest of that member, member by member', () => {
    const user = {
      email: 'a@example.com',
      user_id: 'auth0|1',
      app_metadata: { roles: ['admin', 'billing-viewer'], plan: 'pro' },
    };
    const mapped = fromAuth0(user, providerAliases('auth0', {}));
    expect(mapped.unmapped).to.deep.equal(['user_id', 'app_metadata']);
    const kept = applyMapping('auth0', user, mapped, {
      rolesFrom: 'app_metadata/roles',
      attributes: { user_id: 'auth0_id' },
    });
    expect(kept.record.roles).to.deep.equal(['admin', 'billing_viewer']);
    expect(kept.record.custom_attributes).to.deep.equal({ auth0_id: 'auth0|1' });
    expect(kept.unmapped).to.deep.equal(['app_metadata/plan']);
  });

  it('writes a kept signup time as RFC 3339, from epoch milliseconds or seconds and ISO text', () => {
    const at = (system: 'firebase' | 'cognito' | 'keycloak', member: string, value: unknown) =>
      applyMapping(
        system,
        { [member]: value },
        { record: {}, unmapped: [member] },
        { attributes: { [member]: 't' } },
      ).record.custom_attributes;
    expect(at('firebase', 'createdAt', '1700000000000')).to.deep.equal({ t: '2023-11-14T22:13:20.000Z' });
    expect(at('keycloak', 'createdTimestamp', 1700000000000)).to.deep.equal({
      t: '2023-11-14T22:13:20.000Z',
    });
    expect(at('cognito', 'UserCreateDate', 1700000000.5)).to.deep.equal({ t: '2023-11-14T22:13:20.500Z' });
    expect(at('cognito', 'UserCreateDate', '2024-01-15T10:20:30.123000+02:00')).to.deep.equal({
      t: '2024-01-15T08:20:30.123Z',
    });
  });

  it('makes role and group keys the service takes, and lets --provider name an alias of another type', () => {
    expect(['/staff/eng', 'app-admin', '2fa-users', 'ok:key'].map(keyOf)).to.deep.equal([
      'staff:eng',
      'app_admin',
      '_2fa_users',
      'ok:key',
    ]);
    expect(
      providerAliases('auth0', { providers: { waad: 'corp:azureadv2', 'google-oauth2': 'gsuite' } }),
    ).to.include({
      waad: 'corp:azureadv2',
      'google-oauth2': 'gsuite',
      facebook: 'facebook',
    });
  });

  it("merges Cognito's social users into the user of their email, else into the first of them", () => {
    const user = (Username: string, email: string, social?: string) =>
      cognitoRow({
        Username,
        UserStatus: social ? 'EXTERNAL_PROVIDER' : 'CONFIRMED',
        Attributes: [
          { Name: 'email', Value: email },
          ...(social
            ? [{ Name: 'identities', Value: JSON.stringify([{ providerName: 'Google', userId: social }]) }]
            : []),
        ],
      });
    const file = [
      user('Google_1', 'A@example.com', '1'),
      user('a', 'a@example.com'),
      user('Google_2', 'b@example.com', '2'),
      user('Google_3', 'b@example.com', '3'),
    ];
    const merge = new CognitoMerge(providerAliases('cognito', {}));
    for (const [i, row] of file.entries()) merge.add(i, row);
    const subjects = (place: ReturnType<CognitoMerge['placeOf']>) =>
      'identities' in place
        ? place.identities.map((i) => (i.oauth as { provider_subject_id: string }).provider_subject_id)
        : place;
    expect(file.map((row, i) => subjects(merge.placeOf(i, row)))).to.deep.equal([
      { mergedInto: 1 },
      ['1'],
      ['2', '3'],
      { mergedInto: 2 },
    ]);
  });
});
