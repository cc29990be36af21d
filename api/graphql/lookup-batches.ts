import DataLoader from 'dataloader';
import type { UserRecord } from '../../pipeline/db/lookup-records.js';
import {
  findUsersByLoginId,
  findUsersByOAuth,
  findUsersByStandardAttribute,
  type LoginIdLookup,
  type LookupAttribute,
  type OAuthLookup,
} from '../../pipeline/db/lookups.js';
import type { Queryable } from '../../pipeline/db/pool.js';
import { type AuthenticatorRecord, authenticatorsOfUsers } from '../../pipeline/db/user-authenticators.js';
import { lookupDuration, timed } from '../../pipeline/operator/metrics.js';

/** The three lookups of decisions 4.5, each answered together with the others of its batch. */
export interface UserLookups {
  byLoginId(lookup: LoginIdLookup): Promise<UserRecord | undefined>;
  byOAuth(lookup: OAuthLookup): Promise<UserRecord | undefined>;
  byStandardAttribute(attribute: LookupAttribute, normalizedValue: string): Promise<UserRecord[]>;
  /** A user's authenticators, read only when a query asks for them. */
  authenticatorsOf(userId: string): Promise<AuthenticatorRecord[]>;
}

/** More values than this in one statement would make its first caller wait for the last. */
const MAX_BATCH = 64;

/**
 * Lookups that reach their resolver in the same turn of the event loop (the requests read in one
 * poll of the sockets) go to Postgres as one statement. On this kind of machine a query's cost is
 * mostly the write that wakes its backend, so under load this is the largest saving left; a lone
 * request waits only for the rest of its turn.
 *
 * Nothing is cached: each lookup reads the database after its request arrived, so a user written
 * by one statement is found by the next lookup (spec: immediate consistency).
 */
export function userLookups(db: Queryable, project: string): UserLookups {
  const options = { cache: false, maxBatchSize: MAX_BATCH, batchScheduleFn: setImmediate };
  const byLoginId = new DataLoader<LoginIdLookup, UserRecord | undefined>(
    (wanted) => timed(lookupDuration, { lookup: 'login_id' }, () => findUsersByLoginId(db, project, wanted)),
    options,
  );
  const byOAuth = new DataLoader<OAuthLookup, UserRecord | undefined>(
    (wanted) => timed(lookupDuration, { lookup: 'oauth' }, () => findUsersByOAuth(db, project, wanted)),
    options,
  );
  const attributeLoader = (attribute: LookupAttribute) =>
    new DataLoader<string, UserRecord[]>(
      (values) =>
        timed(lookupDuration, { lookup: 'standard_attribute' }, () =>
          findUsersByStandardAttribute(db, project, attribute, values),
        ),
      options,
    );
  const byAttribute: Record<LookupAttribute, DataLoader<string, UserRecord[]>> = {
    email: attributeLoader('email'),
    phone_number: attributeLoader('phone_number'),
    preferred_username: attributeLoader('preferred_username'),
  };
  const authenticators = new DataLoader<string, AuthenticatorRecord[]>(
    (userIds) => authenticatorsOfUsers(db, userIds),
    options,
  );
  return {
    authenticatorsOf: (userId) => authenticators.load(userId),
    byLoginId: (lookup) => byLoginId.load(lookup),
    byOAuth: (lookup) => byOAuth.load(lookup),
    byStandardAttribute: (attribute, value) => byAttribute[attribute].load(value),
  };
}
