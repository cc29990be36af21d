// Postgres stores neither NUL (in text or jsonb) nor unpaired UTF-16 surrogates (which have no
// UTF-8 form); a value holding one fails the whole statement. These checks keep such values out.

/** NUL, or a surrogate that is not half of a pair. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is the character looked for.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/** Whether Postgres can store the string. */
export function isStorableText(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/** JSON pointers (RFC 6901) of the strings, object keys included, that Postgres cannot store. */
export function unstorableStrings(value: unknown): string[] {
  const found: string[] = [];
  const path: string[] = [];
  const pointer = () => path.map((t) => `/${t.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
  // Nearly every record has none: the walk only tests strings, and builds a pointer for a find.
  const walk = (node: unknown): void => {
    if (typeof node === 'string') {
      if (UNSTORABLE.test(node)) found.push(pointer());
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    for (const key of Object.keys(node)) {
      path.push(key);
      if (UNSTORABLE.test(key)) found.push(pointer());
      walk((node as Record<string, unknown>)[key]);
      path.pop();
    }
  };
  walk(value);
  return found;
}

// JSON.stringify writes NUL as \u0000 and an unpaired surrogate as a \udXXX escape.
const ESCAPED_UNSTORABLE = /\\u0000|\\ud[89a-f][0-9a-f]{2}/i;

/**
 * JSON text of a value that Postgres's jsonb accepts: any NUL or unpaired surrogate (in strings
 * or keys) replaced by U+FFFD. Values without one (nearly all) are stringified once, as they are.
 */
export function storableJson(value: unknown): string {
  const text = JSON.stringify(value);
  return ESCAPED_UNSTORABLE.test(text) ? JSON.stringify(replaceUnstorable(value)) : text;
}

function replaceUnstorable(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(UNSTORABLE_ALL, '\ufffd');
  if (Array.isArray(value)) return value.map(replaceUnstorable);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k.replace(UNSTORABLE_ALL, '\ufffd'), replaceUnstorable(v)]),
  );
}
