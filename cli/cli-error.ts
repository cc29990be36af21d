/** Exit codes of `userctl`: every record succeeded, some failed, or the command could not run. */
export const EXIT = { ok: 0, someFailed: 1, unusable: 2 } as const;

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
