import path from 'node:path';
import { FOREIGN_SYSTEMS } from '../../records/from/foreign-record.js';
import type { SourceMapping } from '../../records/from/source-mapping.js';
import { CliError } from '../cli-error.js';
import type { ForeignFile } from '../files/read-records.js';

/** The options of `userctl import` that say how another system's file is read. */
export interface ForeignOptions {
  from?: string | undefined;
  'hash-key'?: string | undefined;
  'salt-separator'?: string | undefined;
  rounds?: string | undefined;
  'mem-cost'?: string | undefined;
  hashes?: string | undefined;
  provider?: string[] | undefined;
  'roles-from'?: string | undefined;
  'groups-from'?: string | undefined;
  attribute?: string[] | undefined;
  'create-roles'?: boolean | undefined;
}

/** The options that only mean something with `--from`. */
const WITH_FROM = ['hashes', 'provider', 'roles-from', 'groups-from', 'attribute', 'create-roles'] as const;

/** A custom attribute's name as the project declares it. */
const ATTRIBUTE_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/**
 * `--from`, for Firebase its hash parameters (all four flags, or none), for Auth0 its hash file,
 * and the run's mapping: `--provider NAME=ALIAS`, `--roles-from PATH`, `--groups-from PATH`,
 * `--attribute PATH=NAME`.
 */
export function foreignFile(values: ForeignOptions): ForeignFile | undefined {
  if (values.from === undefined) {
    const stray = WITH_FROM.find((name) => values[name] !== undefined && values[name] !== false);
    if (stray) throw new CliError(`--${stray} goes with --from`);
    return undefined;
  }
  const system = FOREIGN_SYSTEMS.find((s) => s === values.from);
  if (!system) throw new CliError(`--from must be one of ${FOREIGN_SYSTEMS.join(', ')}`);
  const mapping = mappingOf(values);
  if (values.hashes !== undefined) {
    if (system !== 'auth0') throw new CliError('--hashes goes with --from auth0');
    return { system, auth0Hashes: path.resolve(values.hashes), mapping };
  }
  const flags = [values['hash-key'], values['salt-separator'], values.rounds, values['mem-cost']];
  if (flags.every((f) => f === undefined)) return { system, mapping };
  if (system !== 'firebase' || flags.some((f) => f === undefined)) {
    throw new CliError(
      '--hash-key, --salt-separator, --rounds and --mem-cost go together, with --from firebase',
    );
  }
  const rounds = Number(values.rounds);
  const memCost = Number(values['mem-cost']);
  if (![rounds, memCost].every((n) => Number.isInteger(n) && n >= 1 && n <= 64)) {
    throw new CliError('--rounds and --mem-cost must be whole numbers');
  }
  return {
    system,
    mapping,
    firebase: {
      signerKey: values['hash-key'] ?? '',
      saltSeparator: values['salt-separator'] ?? '',
      rounds,
      memCost,
    },
  };
}

function mappingOf(values: ForeignOptions): SourceMapping {
  const pairs = (option: string, given: string[] | undefined, check: (right: string) => boolean) =>
    Object.fromEntries(
      (given ?? []).map((pair) => {
        const at = pair.indexOf('=');
        const [left, right] = [pair.slice(0, at), pair.slice(at + 1)];
        if (at <= 0 || !check(right))
          throw new CliError(
            `--${option} ${pair}: expected ${option === 'provider' ? 'NAME=ALIAS' : 'PATH=NAME, NAME a custom attribute'}`,
          );
        return [left, right];
      }),
    );
  const providers = pairs('provider', values.provider, (alias) => alias !== '');
  const attributes = pairs('attribute', values.attribute, (name) => ATTRIBUTE_NAME.test(name));
  return {
    ...(Object.keys(providers).length > 0 ? { providers } : {}),
    ...(Object.keys(attributes).length > 0 ? { attributes } : {}),
    ...(values['roles-from'] ? { rolesFrom: values['roles-from'] } : {}),
    ...(values['groups-from'] ? { groupsFrom: values['groups-from'] } : {}),
  };
}
