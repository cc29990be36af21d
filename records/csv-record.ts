/** Members whose CSV cells are lists, separated by `;`. */
const LIST_MEMBERS = new Set(['roles', 'groups']);
/** Names that would reach an object's prototype, not a member of it: never a record's member. */
const PROTOTYPE_NAMES = new Set(['__proto__', 'constructor', 'prototype']);
/** Members whose CSV cells are booleans (`true`/`false`, also `1`/`0`). */
const BOOLEAN_MEMBERS = new Set(['email_verified', 'phone_number_verified', 'disabled']);

/**
 * An import record from a CSV row whose header names record members: `address.locality` and
 * `custom_attributes.tier` nest, `roles` and `groups` split on `;`, the verified flags and
 * `disabled` are booleans; an empty cell is an absent member. A custom attribute cell that is a
 * JSON number or boolean is taken as one (the project declares its type). A cell that cannot be
 * read gives the record a problem instead.
 */
export function csvRecord(
  row: Readonly<Record<string, string>>,
): { record: Record<string, unknown> } | { problem: string } {
  const record: Record<string, unknown> = {};
  for (const [column, cell] of Object.entries(row)) {
    if (cell === '') continue;
    const pathParts = column.split('.');
    const member = pathParts.join('.');
    if (pathParts.some((part) => PROTOTYPE_NAMES.has(part)))
      return { problem: `${member}: a column may not name ${[...PROTOTYPE_NAMES].join(', ')}` };
    let value: unknown = cell;
    if (LIST_MEMBERS.has(member)) {
      value = cell
        .split(';')
        .map((s) => s.trim())
        .filter((s) => s !== '');
    } else if (BOOLEAN_MEMBERS.has(member)) {
      const word = cell.trim().toLowerCase();
      if (!['true', 'false', '1', '0'].includes(word))
        return { problem: `${member}: "${cell}" is not true or false` };
      value = word === 'true' || word === '1';
    } else if (
      pathParts[0] === 'custom_attributes' &&
      /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false)$/.test(cell)
    ) {
      value = JSON.parse(cell);
    }
    setPath(record, pathParts, value);
  }
  return { record };
}

function setPath(target: Record<string, unknown>, pathParts: readonly string[], value: unknown): void {
  let node = target;
  for (const part of pathParts.slice(0, -1)) {
    const next = node[part];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[pathParts[pathParts.length - 1] as string] = value;
}
