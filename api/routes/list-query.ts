import { isStorableText } from '../../pipeline/storable-text.js';

/**
 * A query parameter given at most once, as text the database can compare; throws
 * `refuse(message)`, naming it, when it is given more often or holds NUL or a lone surrogate.
 */
export function queryValue(
  query: Record<string, string | string[] | undefined>,
  name: string,
  refuse: (message: string) => Error,
): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw refuse(`${name} is given more than once`);
  if (value !== undefined && !isStorableText(value))
    throw refuse(`${name} must not contain NUL or unpaired surrogate characters`);
  return value;
}

/** A query parameter that, when given, must match `pattern`; `refuse` names it and what it must be. */
export function patternedValue(
  query: Record<string, string | string[] | undefined>,
  name: string,
  pattern: { readonly test: (text: string) => boolean; readonly describe: string },
  refuse: (message: string) => Error,
): string | undefined {
  const value = queryValue(query, name, refuse);
  if (value !== undefined && !pattern.test(value)) throw refuse(`${name} must be ${pattern.describe}`);
  return value;
}

/** A list's `limit`: an integer from 1 to `max`, `fallback` when not given. */
export function pageLimit(
  query: Record<string, string | string[] | undefined>,
  bounds: { readonly max: number; readonly fallback: number },
  refuse: (message: string) => Error,
): number {
  const text = queryValue(query, 'limit', refuse);
  const limit = text === undefined ? bounds.fallback : /^\d{1,9}$/.test(text) ? Number(text) : 0;
  if (limit < 1 || limit > bounds.max) throw refuse(`limit must be an integer from 1 to ${bounds.max}`);
  return limit;
}
