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

/** A lookup's key with the project it is asked in. */
interface InProject<K> {
  readonly project: string;
  readonly key: K;
}

/**
 * A batch function over keys of any project: one statement per project of the batch (a lone
 * request's batch has one), each answer in its key's place.
 */
function byProject<K, V>(
  find: (project: string, keys: K[]) => Promise<V[]>,
): (wanted: readonly InProject<K>[]) => Promise<V[]> {
  return async (wanted) => {
    const groups = new Map<string, { keys: K[]; at: number[] }>();
    wanted.forEach(({ project, key }, i) => {
      const group = groups.get(project) ?? { keys: [], at: [] };
      group.keys.push(key);
      group.at.push(i);
      groups.set(project, group);
    });
    const answers = new Array<V>(wanted.length);
    await Promise.all(
      [...groups].map(async ([project, { keys, at }]) => {
        const found = await find(project, keys);
        at.forEach((i, n) => {
          answers[i] = found[n] as V;
        });
      }),
    );
    return answers;
  };
}

/**
 * Lookups that reach their resolver in the same turn of the event loop (the requests read in one
 * poll of the sockets) go to Postgres as one statement per project. On this kind of machine a
 * query's cost is mostly the write that wakes its backend, so under load this is the largest
 * saving left; a lone request waits only for the rest of its turn. One set of batches serves every
 * project: nothing is kept per project.
 *
 * Nothing is cached: each lookup reads the database after its request arrived, so a user written
 * by one statement is found by the next lookup (spec: immediate consistency).
 */
export function userLookups(db: Queryable): (project: string) => UserLookups {
  const options = { cache: false, maxBatchSize: MAX_BATCH, batchScheduleFn: setImmediate };
  const byLoginId = new DataLoader<InProject<LoginIdLookup>, UserRecord | undefined>(
    byProject((project, wanted) =>
      timed(lookupDuration, { lookup: 'login_id' }, () => findUsersByLoginId(db, project, wanted)),
    ),
    options,
  );
  const byOAuth = new DataLoader<InProject<OAuthLookup>, UserRecord | undefined>(
    byProject((project, wanted) =>
      timed(lookupDuration, { lookup: 'oauth' }, () => findUsersByOAuth(db, project, wanted)),
    ),
    options,
  );
  const attributeLoader = (attribute: LookupAttribute) =>
    new DataLoader<InProject<string>, UserRecord[]>(
      byProject((project, values) =>
        timed(lookupDuration, { lookup: 'standard_attribute' }, () =>
          findUsersByStandardAttribute(db, project, attribute, values),
        ),
      ),
      options,
    );
  const byAttribute: Record<LookupAttribute, DataLoader<InProject<string>, UserRecord[]>> = {
    email: attributeLoader('email'),
    phone_number: attributeLoader('phone_number'),
    preferred_username: attributeLoader('preferred_username'),
  };
  // A user's id names its user in one project only.
  const authenticators = new DataLoader<string, AuthenticatorRecord[]>(
    (userIds) => authenticatorsOfUsers(db, userIds),
    options,
  );
  return (project) => ({
    authenticatorsOf: (userId) => authenticators.load(userId),
    byLoginId: (key) => byLoginId.load({ project, key }),
    byOAuth: (key) => byOAuth.load({ project, key }),
    byStandardAttribute: (attribute, value) => byAttribute[attribute].load({ project, key: value }),
  });
}
