import { fullFormats } from 'ajv-formats/dist/formats.js';

// ajv-formats types its formats as any of ajv's format kinds; date-time is a definition with both.
const rfc3339 = fullFormats['date-time'] as {
  validate(text: string): boolean;
  compare(a: string, b: string): number | undefined;
};

/** An offset with its minutes (`Z`, `+01:00`): RFC 3339 has no hour-only offset. */
const FULL_OFFSET = /(?:z|[+-]\d\d:\d\d)$/i;
/** The seconds of a time, `60` being a leap second. */
const SECONDS = /[t\s]\d\d:\d\d:(\d\d)/i;

/**
 * Whether a text is an RFC 3339 date-time that names one instant every part of the service can
 * keep: JavaScript parses it, Postgres stores it (years 1 to 9999 in UTC). A leap second is
 * refused rather than moved, as neither keeps one; so is an hour-only offset (`+01`), which RFC 3339
 * does not define.
 */
export function isInstant(text: string): boolean {
  if (!rfc3339.validate(text) || !FULL_OFFSET.test(text) || SECONDS.exec(text)?.[1] === '60') return false;
  const ms = Date.parse(text);
  if (!Number.isFinite(ms)) return false;
  const year = new Date(ms).getUTCFullYear();
  return year >= 1 && year <= 9999;
}

/** The instant a date-time (one `isInstant` accepts) names, in UTC: `2030-01-01T00:00:00.000Z`. */
export function utcInstant(text: string): string {
  return new Date(text).toISOString();
}

/**
 * The formats of every contract (the service's validators and the console's generated ones): the
 * schema accepts exactly the times the conversion takes.
 */
export const contractFormats = {
  'date-time': { type: 'string', validate: isInstant, compare: rfc3339.compare },
} as const;
