import type { FileRecord } from './file-records.js';

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
  /** Users merged into another user of the file (Cognito's social users), not sent. */
  readonly merged: number;
  readonly fields: readonly FieldPlan[];
  /** The role and group keys the records give, each with how many records give it. */
  readonly roles: ReadonlyMap<string, number>;
  readonly groups: ReadonlyMap<string, number>;
}

// What an import of another system's users keeps and leaves out, tallied before anything is
// applied: `userctl import --from` prints it (`--plan`) and stops on a loss; the service's file
// imports end before their first batch on one (`from.allow_loss`).

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
  const tally = new PlanTally();
  for await (const item of records) tally.add(item);
  return tally.plan();
}

/**
 * The tally of a `--from` file's members, record by record, as the file is read: by `userctl`
 * before it sends anything, and by the service as it takes a file in, before it applies any.
 */
export class PlanTally {
  private readonly carried = new Map<string, number>();
  private readonly dropped = new Map<string, number>();
  private readonly roles = new Map<string, number>();
  private readonly groups = new Map<string, number>();
  private total = 0;
  private unreadable = 0;
  private merged = 0;

  add(item: FileRecord): void {
    const count = (map: Map<string, number>, field: string) => map.set(field, (map.get(field) ?? 0) + 1);
    this.total++;
    if ('problem' in item) {
      this.unreadable++;
      return;
    }
    for (const field of item.source ?? []) count(this.carried, field);
    if ('mergedInto' in item) {
      this.merged++;
      return;
    }
    for (const key of keysOf(item.record.roles)) count(this.roles, key);
    for (const key of keysOf(item.record.groups)) count(this.groups, key);
    for (const field of new Set((item.unmapped ?? []).map(fieldOf))) {
      count(this.dropped, field);
      if (field.includes('/')) count(this.carried, field);
    }
  }

  plan(): ImportPlan {
    const fields = [...this.carried].map(([field, n]) => ({
      field,
      records: n,
      dropped: this.dropped.get(field) ?? 0,
    }));
    fields.sort((a, b) => a.field.localeCompare(b.field));
    return {
      records: this.total,
      unreadable: this.unreadable,
      merged: this.merged,
      fields,
      roles: this.roles,
      groups: this.groups,
    };
  }
}

const keysOf = (list: unknown): string[] =>
  Array.isArray(list) ? list.filter((k): k is string => typeof k === 'string') : [];

/** A tally of keys as text: `admin (12), editor (40)`. */
const tally = (keys: ReadonlyMap<string, number>) =>
  [...keys]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, n]) => `${key} (${n})`)
    .join(', ');

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
  const given = (kind: string, keys: ReadonlyMap<string, number>) =>
    keys.size > 0
      ? [
          `${kind} the records give (each must exist in the project, or --create-roles makes it): ${tally(keys)}`,
        ]
      : [];
  return [
    `${plan.records} records${plan.unreadable > 0 ? `, ${plan.unreadable} unreadable` : ''}` +
      `${plan.merged > 0 ? `, ${plan.merged} social users merged into the user of their email` : ''}`,
    `  ${'field'.padEnd(width)}  ${'records'.padStart(8)}  fate`,
    ...rows,
    ...given('roles', plan.roles),
    ...given('groups', plan.groups),
  ].join('\n');
}

/** The members a run would lose that stop it, unless allowed: credentials, identities, roles. */
export function lossesThatStop(plan: ImportPlan, allowed: ReadonlySet<string>): FieldPlan[] {
  return plan.fields.filter((f) => stops(f, allowed));
}

/** Whether a loss stops the run: `--allow-loss` names the member, or a member above it (`app_metadata`). */
function stops(field: FieldPlan, allowed: ReadonlySet<string>): boolean {
  const parts = field.field.split('/');
  const named = parts.some((_, i) => allowed.has(parts.slice(0, i + 1).join('/')));
  return field.dropped > 0 && LOSS_THAT_STOPS.test(field.field) && !named;
}
