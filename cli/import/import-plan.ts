import type { FileRecord } from '../records/file-records.js';

/** One member of another system's users: how many carry it, and how many had it left out. */
export interface FieldPlan {
  /** A member of the source user (`app_metadata`), or items of one (`identities/*`). */
  readonly field: string;
  readonly records: number;
  readonly dropped: number;
}

/** What an import of another system's file would keep and leave out, before anything is sent. */
export interface ImportPlan {
  readonly records: number;
  /** Records that fail before being sent (not JSON, not an object). */
  readonly unreadable: number;
  readonly fields: readonly FieldPlan[];
}

/**
 * The members whose loss stops a run unless `--allow-loss` names them: what a user signs in with
 * (passwords and hashes, identities and social logins, second factors, credentials) and what it
 * may do (roles and groups, which Auth0 keeps in app_metadata).
 */
const LOSS_THAT_STOPS =
  /pass|hash|salt|identit|provider|mfa|factor|totp|otp|credential|secret|role|group|app_metadata/i;

/** A path of a member left out, with the position of an item replaced: `identities/2` -> `identities/*`. */
const fieldOf = (path: string) => path.replace(/\/\d+(?=\/|$)/g, '/*');

/** Reads every record of a `--from` file and tallies its members: kept, and left out. */
export async function planImport(records: AsyncIterable<FileRecord>): Promise<ImportPlan> {
  const carried = new Map<string, number>();
  const dropped = new Map<string, number>();
  const count = (map: Map<string, number>, field: string) => map.set(field, (map.get(field) ?? 0) + 1);
  let total = 0;
  let unreadable = 0;
  for await (const item of records) {
    total++;
    if ('problem' in item) {
      unreadable++;
      continue;
    }
    for (const field of item.source ?? []) count(carried, field);
    for (const field of new Set((item.unmapped ?? []).map(fieldOf))) {
      count(dropped, field);
      if (field.includes('/')) count(carried, field);
    }
  }
  const fields = [...carried].map(([field, n]) => ({ field, records: n, dropped: dropped.get(field) ?? 0 }));
  fields.sort((a, b) => a.field.localeCompare(b.field));
  return { records: total, unreadable, fields };
}

/** The plan as a table: each member, how many records carry it, and whether it is kept. */
export function planText(plan: ImportPlan, allowed: ReadonlySet<string>): string {
  const width = Math.max(5, ...plan.fields.map((f) => f.field.length));
  const rows = plan.fields.map((f) => {
    const fate =
      f.dropped === 0
        ? 'kept'
        : `${f.dropped === f.records ? 'dropped' : `dropped in ${f.dropped}`}${stops(f, allowed) ? ' (stops the run: --allow-loss)' : ''}`;
    return `  ${f.field.padEnd(width)}  ${String(f.records).padStart(8)}  ${fate}`;
  });
  return [
    `${plan.records} records${plan.unreadable > 0 ? `, ${plan.unreadable} unreadable` : ''}`,
    `  ${'field'.padEnd(width)}  ${'records'.padStart(8)}  fate`,
    ...rows,
  ].join('\n');
}

/** The members a run would lose that stop it, unless allowed: credentials, identities, roles. */
export function lossesThatStop(plan: ImportPlan, allowed: ReadonlySet<string>): FieldPlan[] {
  return plan.fields.filter((f) => stops(f, allowed));
}

function stops(field: FieldPlan, allowed: ReadonlySet<string>): boolean {
  return field.dropped > 0 && LOSS_THAT_STOPS.test(field.field) && !allowed.has(field.field);
}
