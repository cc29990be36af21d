import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { jsonObject } from '../../records/from/foreign-record.js';
import { CliError } from '../cli-error.js';

/** How many ids a report lists before it only counts. */
const LISTED = 20;

/**
 * The password hashes Auth0 support delivers beside a user export (its export job carries none):
 * one JSON object per line, `{"_id":{"$oid":...},"alt_id"?,"email",...,"passwordHash":"$2b$..."}`,
 * keyed by the user id the export names (`auth0|<alt_id>` when the line has one, else
 * `auth0|<_id.$oid>`). Every hash is either joined to its user or reported, and so is every user
 * of Auth0's own database (`auth0|...`) that has none.
 */
export class Auth0Hashes {
  private readonly taken = new Set<string>();
  private readonly missing: string[] = [];

  private constructor(private readonly hashes: ReadonlyMap<string, string>) {}

  /** Reads a hash file; a line that is not one of Auth0's hash objects stops the run (exit 2) before any request. */
  static async read(file: string): Promise<Auth0Hashes> {
    const hashes = new Map<string, string>();
    const input = createReadStream(file);
    await new Promise<void>((resolve, reject) => {
      input.once('open', () => resolve());
      input.once('error', (err: NodeJS.ErrnoException) =>
        reject(new CliError(`cannot read ${file}: ${err.code}`)),
      );
    });
    let line = 0;
    for await (const text of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
      line++;
      if (text.trim() === '') continue;
      const entry = jsonObject(text);
      const id = entry && userIdOf(entry);
      if (!entry || !id || typeof entry.passwordHash !== 'string')
        throw new CliError(`${file} line ${line} is not an Auth0 password hash (_id.$oid and passwordHash)`);
      hashes.set(id, entry.passwordHash);
    }
    return new Auth0Hashes(hashes);
  }

  /** The hash of a user of the export, by its `user_id` (undefined: none; a database user's is reported). */
  take(userId: unknown): string | undefined {
    if (typeof userId !== 'string') return undefined;
    const hash = this.hashes.get(userId);
    if (hash !== undefined) this.taken.add(userId);
    else if (userId.startsWith('auth0|')) this.missing.push(userId);
    return hash;
  }

  /** What the join left over, for the closing report: hashes whose user is not in the export, users without a hash. */
  report(): string[] {
    const unjoined = [...this.hashes.keys()].filter((id) => !this.taken.has(id));
    const lines = [`auth0 hashes: ${this.taken.size} of ${this.hashes.size} joined to their users`];
    if (unjoined.length > 0)
      lines.push(`auth0 hashes: ${unjoined.length} whose user is not in the file: ${listed(unjoined)}`);
    if (this.missing.length > 0)
      lines.push(
        `auth0 hashes: ${this.missing.length} database users without a hash: ${listed(this.missing)}`,
      );
    return lines;
  }
}

function listed(ids: readonly string[]): string {
  const more = ids.length - LISTED;
  return `${ids.slice(0, LISTED).join(', ')}${more > 0 ? `, and ${more} more` : ''}`;
}

/** `auth0|<alt_id>` when the line has one, else `auth0|<_id.$oid>`: the id the user export names. */
function userIdOf(entry: Record<string, unknown>): string | undefined {
  if (typeof entry.alt_id === 'string' && entry.alt_id !== '') return `auth0|${entry.alt_id}`;
  const oid = (entry._id as { $oid?: unknown } | undefined)?.$oid;
  return typeof oid === 'string' && oid !== '' ? `auth0|${oid}` : undefined;
}
