import { CliError, EXIT } from '../cli-error.js';
import { errorMessage, type ServiceClient } from '../service-client.js';

/** `userctl status ID`: prints an import's or export's status as the service answers it. */
export async function printStatus(client: ServiceClient, id: string): Promise<number> {
  const kind = /^userimport_/.test(id) ? 'import' : /^userexport_/.test(id) ? 'export' : undefined;
  if (!kind) throw new CliError(`${id} is not a task id (userimport_... or userexport_...)`);
  const answer = await client.call<Record<string, unknown>>('GET', `/_api/admin/users/${kind}/${id}`);
  if (answer.status !== 200) {
    throw new CliError(
      `cannot read ${id} (${answer.status}): ${errorMessage(answer.body) ?? 'no reason given'}`,
    );
  }
  process.stdout.write(`${JSON.stringify(answer.body, null, 2)}\n`);
  return answer.body.failed_at ? EXIT.someFailed : EXIT.ok;
}
