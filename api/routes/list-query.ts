/** A query parameter given at most once; throws `refuse(message)` when it is given more often. */
export function queryValue(
  query: Record<string, string | string[] | undefined>,
  name: string,
  refuse: (message: string) => Error,
): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw refuse(`${name} is given more than once`);
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
