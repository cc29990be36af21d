// The rows that belong to a user, and how each set of them is reached from `users u`: the one place
// that knows these joins, so that the lookups, the import's load, the search documents and the
// export read the same rows. Each use chooses its shape: the join itself (one row per related row),
// a JSON array or a SQL array built by a correlated subquery on the set's user_id index, or a test
// of existence. The import writes the same tables with the columns listed here.

/** A set of a user's related rows: its tables with their alias, and which rows are the user's. */
export interface RelatedRows {
  /** The set's table, with its alias. */
  readonly from: string;
  /** The column of that table that names the user. */
  readonly owner: string;
  /** The tables the set reaches through it (a link table's roles or groups). */
  readonly joins?: string;
  /** Which of the table's rows are in the set, when not all of them. */
  readonly where?: string;
}

export const RELATED = {
  identities: { from: 'identities i', owner: 'i.user_id' },
  loginIds: { from: 'identities i', owner: 'i.user_id', where: `i.type = 'login_id'` },
  oauthConnections: { from: 'identities i', owner: 'i.user_id', where: `i.type = 'oauth'` },
  verifiedClaims: { from: 'verified_claims v', owner: 'v.user_id' },
  authenticators: { from: 'authenticators a', owner: 'a.user_id' },
  roles: { from: 'user_roles ur', owner: 'ur.user_id', joins: 'JOIN roles r ON r.id = ur.role_id' },
  groups: { from: 'user_groups ug', owner: 'ug.user_id', joins: 'JOIN groups g ON g.id = ug.group_id' },
} as const satisfies Record<string, RelatedRows>;

/** What a subquery over a set reads besides the set: a further condition, an order. */
export interface RelatedShape {
  readonly where?: string;
  readonly order?: string;
}

const conditions = (set: RelatedRows, shape: RelatedShape): string =>
  [`${set.owner} = u.id`, 'where' in set ? set.where : undefined, shape.where]
    .filter((condition) => condition !== undefined)
    .join(' AND ');

const tables = (set: RelatedRows): string => ('joins' in set ? `${set.from} ${set.joins}` : set.from);

const ordered = (shape: RelatedShape): string => (shape.order ? ` ORDER BY ${shape.order}` : '');

/** The set joined to `users u`, for a statement that reads it row by row. */
export function joinRelated(set: RelatedRows): string {
  return `JOIN ${set.from} ON ${set.owner} = u.id${'joins' in set ? ` ${set.joins}` : ''}`;
}

/** The user's rows of the set as a JSON array of `element` (`[]` for none), over `users u`. */
export function relatedJson(set: RelatedRows, element: string, shape: RelatedShape = {}): string {
  return `(SELECT coalesce(json_agg(${element}${ordered(shape)}), '[]')
     FROM ${tables(set)} WHERE ${conditions(set, shape)})`;
}

/** The user's values of `value` in the set as a SQL array (`{}` for none), over `users u`. */
export function relatedArray(set: RelatedRows, value: string, shape: RelatedShape = {}): string {
  return `coalesce((SELECT array_agg(${value}${ordered(shape)})
     FROM ${tables(set)} WHERE ${conditions(set, shape)}), '{}')`;
}

/** Whether the user has a row of the set meeting `where`, over `users u`. */
export function relatedExists(set: RelatedRows, where: string): string {
  return `EXISTS (SELECT 1 FROM ${tables(set)} WHERE ${conditions(set, { where })})`;
}

/** The columns the import writes each related table with (COPY), in the order its rows carry them. */
export const WRITTEN_COLUMNS = {
  identities: [
    'id',
    'user_id',
    'type',
    'login_id_key',
    'login_id_type',
    'login_id',
    'original_login_id',
    'email',
    'phone_number',
    'preferred_username',
    'provider_alias',
    'provider_type',
    'provider_subject_id',
    'profile',
    'claims',
  ],
  verified_claims: ['id', 'user_id', 'name', 'value'],
  authenticators: [
    'id',
    'user_id',
    'kind',
    'type',
    'password_hash',
    'email',
    'phone',
    'totp_secret',
    'expire_after',
  ],
  user_roles: ['user_id', 'role_id'],
  user_groups: ['user_id', 'group_id'],
} as const satisfies Record<string, readonly string[]>;
