import type { LoginIdKey, ProjectConfig } from '../../pipeline/config.js';
import type { LookupAttribute } from '../../pipeline/db/lookups.js';
import { ApiError } from '../../pipeline/errors.js';
import { KEY_OF_ATTRIBUTE } from '../../pipeline/identity/login-id-attributes.js';
import { type Normalized, normalizeLoginId } from '../../pipeline/identity/normalize.js';
import { isStorableText } from '../../pipeline/storable-text.js';

/** A lookup argument that is not allowed or not valid: `Invalid`/`GetUsersInvalidArgument`. */
export function invalidArgument(argument: string, message: string): ApiError {
  return new ApiError('GetUsersInvalidArgument', message, { argument });
}

/** Checks `attributeName` and normalizes `attributeValue` (decisions 4.5, getUsersByStandardAttribute). */
export function standardAttributeArguments(
  project: ProjectConfig,
  attributeName: string,
  attributeValue: string,
): { attribute: LookupAttribute; value: string } {
  if (!Object.hasOwn(KEY_OF_ATTRIBUTE, attributeName)) {
    throw invalidArgument(
      'attributeName',
      `attributeName must be one of ${Object.keys(KEY_OF_ATTRIBUTE).join(', ')}`,
    );
  }
  const attribute = attributeName as LookupAttribute;
  const key = KEY_OF_ATTRIBUTE[attribute];
  const normalized = normalizeLoginId(key, attributeValue, caseSensitive(project, key));
  return { attribute, value: valueOrThrow(normalized, 'attributeValue') };
}

/** Checks `loginIDKey` against the project's login id keys and normalizes `loginIDValue`. */
export function loginIdArguments(
  project: ProjectConfig,
  loginIDKey: string,
  loginIDValue: string,
): { key: LoginIdKey; value: string } {
  const config = project.loginIdKeys.get(loginIDKey as LoginIdKey);
  if (!config) {
    throw invalidArgument(
      'loginIDKey',
      `loginIDKey must be one of ${[...project.loginIdKeys.keys()].join(', ')}`,
    );
  }
  const key = loginIDKey as LoginIdKey;
  return {
    key,
    value: valueOrThrow(normalizeLoginId(key, loginIDValue, config.caseSensitive), 'loginIDValue'),
  };
}

/** Checks that the alias is a configured provider and the subject id is not empty. */
export function oauthArguments(project: ProjectConfig, alias: string, subjectId: string): void {
  for (const [argument, value] of [
    ['oauthProviderAlias', alias],
    ['oauthProviderUserID', subjectId],
  ] as const) {
    if (!isStorableText(value)) {
      throw invalidArgument(argument, `${argument} must not contain NUL or unpaired surrogate characters`);
    }
  }
  if (!project.oauthProviders.has(alias)) {
    throw invalidArgument('oauthProviderAlias', `unknown OAuth provider alias: ${alias}`);
  }
  if (subjectId === '') throw invalidArgument('oauthProviderUserID', 'oauthProviderUserID must not be empty');
}

function caseSensitive(project: ProjectConfig, key: LoginIdKey): boolean {
  return project.loginIdKeys.get(key)?.caseSensitive ?? false;
}

function valueOrThrow(normalized: Normalized, argument: string): string {
  if (!normalized.ok) throw invalidArgument(argument, `${argument}: ${normalized.problem}`);
  return normalized.value;
}
