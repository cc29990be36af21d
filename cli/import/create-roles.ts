import type { ImportPlan } from '../../records/import-plan.js';
import { CliError } from '../cli-error.js';
import type { ServiceClient } from '../service-client.js';

const GRAPHQL = '/_api/admin/graphql';

interface MutationAnswer {
  readonly data?: unknown;
  readonly errors?: readonly { message?: string; extensions?: { reason?: string } }[];
}

/**
 * Makes the roles and groups the records of a plan give that the project lacks
 * (`userctl import --from ... --create-roles`), through the admin API's own mutations, before any
 * record is sent: one that exists already is left as it is. Returns how many were made.
 */
export async function createRoles(client: ServiceClient, plan: ImportPlan): Promise<number> {
  let made = 0;
  for (const [kind, keys] of [
    ['Role', plan.roles],
    ['Group', plan.groups],
  ] as const) {
    for (const key of keys.keys()) {
      const query = `mutation($key: String!) { create${kind}(input: {key: $key}) { ${kind.toLowerCase()} { id } } }`;
      const answer = await client.call<MutationAnswer>(
        'POST',
        GRAPHQL,
        JSON.stringify({ query, variables: { key } }),
      );
      const refusal = answer.body?.errors?.[0];
      if (refusal?.extensions?.reason === `${kind}DuplicateKey`) continue;
      if (answer.status !== 200 || refusal)
        throw new CliError(
          `cannot create ${kind.toLowerCase()} ${key}: ${refusal?.message ?? `status ${answer.status}`}`,
        );
      made++;
    }
  }
  return made;
}
