// ClickHouse 18.16 has no server-side query parameters: every value a statement carries is written
// into its text by these functions, and by nothing else.

const ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\\\',
  "'": "\\'",
  '\0': '\\0',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

/** A ClickHouse string literal of any text: quotes, backslashes and control characters escaped. */
export function chString(value: string): string {
  return `'${value.replace(/[\\'\0\n\r\t]/g, (c) => ESCAPES[c] as string)}'`;
}

/** An Array(String) literal. */
export function chStrings(values: readonly string[]): string {
  return `[${values.map(chString).join(', ')}]`;
}

/** An integer literal; anything but an integer (as text, number or bigint) is refused. */
export function chInt(value: string | number | bigint): string {
  const text = String(value);
  if (!/^-?\d{1,19}$/.test(text)) throw new TypeError(`not an integer: ${text}`);
  return text;
}

/** A `LIKE` pattern that finds `text` anywhere, its wildcards and backslashes taken literally. */
export function chContains(text: string): string {
  return chString(`%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
}

/** A database or table name (identifiers are never user input; checked all the same). */
export function chIdentifier(name: string): string {
  if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(name)) throw new TypeError(`not an identifier: ${name}`);
  return name;
}
