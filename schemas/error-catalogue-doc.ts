import { ERROR_NAMES, ERROR_REASONS } from './error-reasons.js';

/** docs/errors.md: the error envelope and every reason of the catalogue, as a table. */
export function errorCatalogueMarkdown(): string {
  const rows = Object.entries(ERROR_REASONS).map(
    ([reason, { name, doc }]) =>
      `| \`${reason}\` | ${name} | ${ERROR_NAMES[name]} | ${doc.replaceAll('|', '\\|')} |`,
  );
  return `${[
    '# Errors',
    '',
    '<!-- Written by `npm run contracts` from schemas/error-reasons.ts; edit that file, not this one. -->',
    '',
    'Every error answer of the REST endpoints is `{"error": {"name", "reason", "message", "code", "info"?}}`;',
    'GraphQL errors carry `extensions: {errorName, reason, info?}`. The import endpoints answer a malformed',
    'request with `{"error": "<what is wrong>"}` (400 or 413), as the spec shows. `name` fixes the HTTP',
    'status; `reason` says what happened; `info` holds the details named below.',
    '',
    '| reason | name | status | when |',
    '| --- | --- | --- | --- |',
    ...rows,
  ].join('\n')}\n`;
}
