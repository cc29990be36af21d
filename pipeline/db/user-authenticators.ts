import type { Queryable } from './pool.js';

/** An authenticator as the graph shows it: never its password hash or TOTP secret. */
export interface AuthenticatorRecord {
  readonly id: string;
  readonly user_id: string;
  readonly kind: 'primary' | 'secondary';
  readonly type: 'password' | 'oob_otp_email' | 'oob_otp_sms' | 'totp';
  readonly email: string | null;
  readonly phone: string | null;
  readonly created_at: Date;
  readonly updated_at: Date;
}

/** For each user, its authenticators in creation order (the secret columns are not read). */
export async function authenticatorsOfUsers(
  db: Queryable,
  userIds: readonly string[],
): Promise<AuthenticatorRecord[][]> {
  const { rows } = await db.query<AuthenticatorRecord & { n: number }>({
    name: 'authenticators-of-users',
    text: `SELECT w.n::int AS n, a.id, a.user_id, a.kind, a.type, a.email, a.phone, a.created_at, a.updated_at
             FROM unnest($1::uuid[]) WITH ORDINALITY AS w(id, n)
             JOIN authenticators a ON a.user_id = w.id
            ORDER BY w.n, a.created_at, a.id`,
    values: [userIds],
  });
  const found = userIds.map((): AuthenticatorRecord[] => []);
  for (const { n, ...a } of rows) found[n - 1]?.push(a);
  return found;
}
