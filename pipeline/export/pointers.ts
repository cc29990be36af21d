/** A column of a CSV export: the JSON pointer it reads and the name in the header row. */
export interface ExportField {
  readonly pointer: string;
  readonly field_name: string;
}

/** Every pointer of the spec's table (2.2), in its order: the default columns. */
export const SPEC_POINTERS = [
  '/sub',
  '/preferred_username',
  '/email',
  '/phone_number',
  '/email_verified',
  '/phone_number_verified',
  '/name',
  '/given_name',
  '/middle_name',
  '/nickname',
  '/profile',
  '/picture',
  '/website',
  '/gender',
  '/birthdate',
  '/zoneinfo',
  '/locale',
  '/address/street_address',
  '/address/locality',
  '/address/region',
  '/address/postal_code',
  '/address/country',
  '/roles',
  '/groups',
  '/disabled',
  '/identities',
  '/mfa/emails',
  '/mfa/phone_numbers',
  '/mfa/totps',
  '/biometric_count',
  '/passkey_count',
] as const;

/** The reference tokens of a pointer, unescaped (RFC 6901: `~1` is `/`, then `~0` is `~`). */
export function pointerTokens(pointer: string): string[] {
  return pointer
    .split('/')
    .slice(1)
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** Escapes one reference token for use in a pointer. */
function escapeToken(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** The columns of an export: the requested ones, or the table's then each custom attribute's. */
export function exportFields(
  requested: readonly { pointer: string; field_name?: string }[] | undefined,
  customAttributeNames: Iterable<string>,
): ExportField[] {
  const fields: readonly { pointer: string; field_name?: string }[] =
    requested ??
    [...SPEC_POINTERS, ...[...customAttributeNames].map((n) => `/custom_attributes/${escapeToken(n)}`)].map(
      (pointer) => ({ pointer }),
    );
  return fields.map((f) => ({
    pointer: f.pointer,
    field_name: f.field_name ?? pointerTokens(f.pointer).join('.'),
  }));
}

/** The records' members the fields read: the first token of each pointer. */
export function pointedMembers(fields: readonly ExportField[]): Set<string> {
  return new Set(fields.map((f) => pointerTokens(f.pointer)[0] as string));
}

/** The field names of a request when any repeats, else undefined (UserExportNonUniqueFieldNames). */
export function nonUniqueFieldNames(fields: readonly ExportField[]): string[] | undefined {
  const names = fields.map((f) => f.field_name);
  return new Set(names).size === names.length ? undefined : names;
}

/**
 * Compiles a pointer into a function that reads its value from a record, or undefined when the
 * path does not exist. Array members are addressed by index (`/identities/0/type`). Whether a
 * token can be an index is decided once, here, not on each record.
 */
export function compilePointer(pointer: string): (record: unknown) => unknown {
  const steps = pointerTokens(pointer).map((token) => ({
    token,
    index: /^(0|[1-9][0-9]*)$/.test(token) ? Number(token) : undefined,
  }));
  return (record) => {
    let value: unknown = record;
    for (const { token, index } of steps) {
      if (Array.isArray(value)) {
        if (index === undefined) return undefined;
        value = value[index];
      } else if (value !== null && typeof value === 'object' && Object.hasOwn(value, token)) {
        value = (value as Record<string, unknown>)[token];
      } else {
        return undefined;
      }
    }
    return value;
  };
}
