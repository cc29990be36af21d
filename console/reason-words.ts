/** An error as the API answers it for a record or a task. */
export interface ApiError {
  readonly reason: string;
  readonly message: string;
  readonly info?: Record<string, unknown>;
}

/** One cause of a ValidationFailed: where in the record, which rule, and the rule's details. */
export interface Cause {
  readonly location: string;
  readonly kind: string;
  readonly details?: Record<string, unknown>;
}

/**
 * A member's place in words: `/email` -> `email`, `/custom_attributes/tier` -> `custom attribute
 * tier`, `/identities/0/oauth/provider_alias` -> `identity 1 oauth provider_alias`.
 */
export function fieldOf(location: string): string {
  const parts = location.split('/').filter((p) => p !== '');
  if (parts.length === 0) return 'the record';
  if (parts[0] === 'custom_attributes' && parts[1]) return `custom attribute ${parts.slice(1).join(' ')}`;
  return parts
    .map((part) => (/^\d+$/.test(part) ? `${Number(part) + 1}` : part))
    .join(' ')
    .replace(/^identities (\d+)/, 'identity $1')
    .replace(/^totps (\d+)/, 'authenticator app $1');
}

const text = (value: unknown) =>
  typeof value === 'string' || typeof value === 'number' ? String(value) : '';

/**
 * What a cause says is wrong, in words. `columnOf` names the file's column a member came from, so
 * that a member no record has is named by the column that made it.
 */
export function causeInWords(cause: Cause, columnOf?: (member: string) => string | undefined): string {
  const d = cause.details ?? {};
  const field = fieldOf(cause.location);
  switch (cause.kind) {
    case 'required':
      return `${fieldOf(`${cause.location}/${text(d.missingProperty)}`)} is missing`;
    case 'additionalProperties': {
      const member = text(d.additionalProperty);
      const column = cause.location === '' ? columnOf?.(member) : undefined;
      return column
        ? `column "${column}" is mapped to "${member}", which is not a member of a record: map it to one, or leave it empty`
        : `${fieldOf(`${cause.location}/${member}`)} is not a member a record has`;
    }
    case 'type':
      if (!d.type) return `${field}: ${text(d.message)}`;
      return `${field} must be ${/^[aeiou]/.test(text(d.type)) ? 'an' : 'a'} ${text(d.type).replace(',', ' or ')}`;
    case 'enum':
      return `${field} must be one of ${Array.isArray(d.allowedValues) ? d.allowedValues.join(', ') : 'the allowed values'}`;
    case 'pattern':
      return `${field} does not have the form it needs`;
    case 'minLength':
      return `${field} is empty`;
    case 'maxLength':
      return `${field} is longer than ${text(d.limit)} characters`;
    case 'maxItems':
      return `${field} has more than ${text(d.limit)} items`;
    case 'format':
      return d.format ? `${field} is not a valid ${text(d.format)}` : `${field}: ${text(d.message)}`;
    default:
      return `${field}: ${text(d.message) || cause.kind}`;
  }
}

/** An error of the API in words a support team reads: the field and what is wrong, with its reason. */
export function errorInWords(error: ApiError): string {
  const info = error.info ?? {};
  const list = (value: unknown) => (Array.isArray(value) ? value.join(', ') : '');
  let words: string;
  switch (error.reason) {
    case 'ValidationFailed':
      words = Array.isArray(info.causes)
        ? (info.causes as Cause[]).map((c) => causeInWords(c)).join('; ')
        : error.message;
      break;
    case 'DuplicatedIdentity':
      words = info.login_id_key
        ? `the ${text(info.login_id_key)} is already another user's sign-in`
        : info.provider_alias
          ? `this ${text(info.provider_alias)} sign-in already belongs to another user`
          : 'a sign-in of this record already belongs to another user';
      break;
    case 'RoleUnknownKeys':
      words = `roles the project does not have: ${list(info.keys)} (create them first)`;
      break;
    case 'GroupUnknownKeys':
      words = `groups the project does not have: ${list(info.keys)} (create them first)`;
      break;
    case 'UserIDConflict':
      words = 'sub is the id of another user, or not the id of the user this record matches';
      break;
    default:
      words = error.message;
  }
  return `${words.charAt(0).toUpperCase()}${words.slice(1)} (${error.reason})`;
}
