import { ApiError } from '../errors.js';
import { isStorableText } from '../storable-text.js';

/** Authgear's UserSortBy and SortDirection. */
export type UserSortBy = 'CREATED_AT' | 'LAST_LOGIN_AT';
export type SortDirection = 'ASC' | 'DESC';

/** Where a page starts: after a user of an earlier page (stable under writes), or after an offset. */
export type PageStart =
  | { readonly kind: 'first' }
  | { readonly kind: 'after'; readonly sortMicros: string | null; readonly id: string }
  | { readonly kind: 'offset'; readonly offset: number };

/** users(searchKeyword, first, after, sortBy, sortDirection, groupKeys, roleKeys), checked. */
export interface UserSearch {
  /** Folded by the index; empty or absent: every user. */
  readonly keyword: string;
  readonly first: number;
  readonly start: PageStart;
  readonly sortBy: UserSortBy;
  readonly direction: SortDirection;
  readonly roleKeys: readonly string[];
  readonly groupKeys: readonly string[];
}

/** A user of a page: its id and its sort value (microseconds since the epoch; null: never). */
export interface SearchHit {
  readonly id: string;
  readonly sortMicros: string | null;
}

/** The search index behind `users`: ClickHouse when configured, else Postgres. */
export interface UserSearchIndex {
  /** One page: at most `first` hits, and whether more follow. */
  page(search: UserSearch): Promise<{ hits: SearchHit[]; hasNextPage: boolean }>;
  /** How many users match, ignoring the page. */
  count(search: UserSearch): Promise<number>;
}

/** A page of hits from the `first + 1` rows an index read: the extra row tells that more follow. */
export function pageOf<R>(rows: readonly R[], first: number, hit: (row: R) => SearchHit) {
  return { hits: rows.slice(0, first).map(hit), hasNextPage: rows.length > first };
}

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 1000;
/** Characters of a `searchKeyword`: longer text names no user, and the index's query must stay small. */
export const MAX_SEARCH_KEYWORD_LENGTH = 256;
/** The furthest position an offset cursor may name: deeper pages are reached with the user cursors. */
export const MAX_CURSOR_OFFSET = 10_000;

/**
 * A cursor of this service: base64url of `user:<sortBy>:<micros or ->:<id>`, so that the next page
 * starts after that user whatever was written meanwhile. Authgear's portal also makes cursors of
 * its own from offsets (`offset:<n>`, base64url): they are read too, as offsets.
 */
export function userCursor(sortBy: UserSortBy, hit: SearchHit): string {
  return Buffer.from(`user:${sortBy}:${hit.sortMicros ?? '-'}:${hit.id}`).toString('base64url');
}

/** A user, role or group id as this service writes it (lowercase UUID text). */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Authgear's offset cursor: base64url of `offset:<n>`, the position of the edge it follows. */
export const offsetCursor = (offset: number) => Buffer.from(`offset:${offset}`).toString('base64url');

/** Where the page after an offset cursor starts, or undefined when `after` is not one. */
export function afterOffset(after: string): number | undefined {
  const offset = /^offset:(\d{1,9})$/.exec(Buffer.from(after, 'base64url').toString());
  if (!offset) return undefined;
  const position = Number(offset[1]);
  if (position > MAX_CURSOR_OFFSET) {
    throw new ApiError('CursorOffsetTooLarge', `an offset cursor may name ${MAX_CURSOR_OFFSET} at most`, {
      causes: [{ location: '/after', kind: 'maximum', details: { maximum: MAX_CURSOR_OFFSET } }],
    });
  }
  return position + 1;
}

/** A cursor that is not one of this list's: Invalid/InvalidCursor. */
export function invalidCursor(message: string): ApiError {
  return new ApiError('InvalidCursor', message, {
    causes: [{ location: '/after', kind: 'cursor' }],
  });
}

/** The page start an `after` argument names; a cursor that is not one of ours is Invalid. */
export function pageStart(after: string | null | undefined, sortBy: UserSortBy): PageStart {
  if (after === null || after === undefined) return { kind: 'first' };
  const offset = afterOffset(after);
  if (offset !== undefined) return { kind: 'offset', offset };
  const text = Buffer.from(after, 'base64url').toString();
  const user = /^user:([A-Z_]+):(-|-?\d{1,19}):(.+)$/.exec(text);
  if (user && user[1] === sortBy && UUID.test(user[3] as string)) {
    return { kind: 'after', sortMicros: user[2] === '-' ? null : (user[2] as string), id: user[3] as string };
  }
  throw invalidCursor('after is not a cursor of this list and sort');
}

/** The checked page size: `first` when given, else the default. */
export function pageSize(first: number | null | undefined): number {
  if (first === null || first === undefined) return DEFAULT_PAGE_SIZE;
  if (first < 0 || first > MAX_PAGE_SIZE) {
    throw new ApiError('ValidationFailed', `first must be between 0 and ${MAX_PAGE_SIZE}`, {
      causes: [{ location: '/first', kind: 'range', details: { minimum: 0, maximum: MAX_PAGE_SIZE } }],
    });
  }
  return first;
}

/**
 * The keyword as both indexes match it: the unit separator (between the indexed parts) removed.
 * Text no user can hold (NUL, a lone surrogate) is refused.
 */
export function searchKeyword(keyword: string | null | undefined): string {
  const text = (keyword ?? '').replaceAll('\u001f', '');
  if (text.length > MAX_SEARCH_KEYWORD_LENGTH) {
    throw new ApiError(
      'SearchKeywordTooLong',
      `searchKeyword is longer than ${MAX_SEARCH_KEYWORD_LENGTH} characters`,
      {
        causes: [
          { location: '/searchKeyword', kind: 'maxLength', details: { limit: MAX_SEARCH_KEYWORD_LENGTH } },
        ],
      },
    );
  }
  if (!isStorableText(text)) {
    throw new ApiError('ValidationFailed', 'searchKeyword holds characters no user can hold', {
      causes: [{ location: '/searchKeyword', kind: 'storableText' }],
    });
  }
  return text;
}
