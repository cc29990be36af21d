/**
 * Exit codes of `userctl`: every record succeeded, some failed, the command could not run, or
 * every record succeeded but some with warnings or with members of their source left out.
 */
export const EXIT = { ok: 0, someFailed: 1, unusable: 2, withWarnings: 3 } as const;

/**
 * A failure that ends the command with a one-line message: a usage error, a refused token, a
 * service that cannot be reached, a state file of another run.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.unusable,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
