// `userctl`: the operator's command-line client of the admin API (and of the import log's replay).

import { statSync } from 'node:fs';
import path from 'node:path';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { formatOf, type RecordFormat } from '../records/file-records.js';
import { COGNITO_NOTICE } from '../records/from/cognito.js';
import { type ImportPlan, lossesThatStop, planImport, planText } from '../records/import-plan.js';
import { CliError, EXIT } from './cli-error.js';
import { readChanges } from './commands/changes.js';
import { exportUsers } from './commands/export.js';
import { PROJECTS_OPTIONS, PROJECTS_USAGE, projects } from './commands/projects.js';
import { replay } from './commands/replay.js';
import { printStatus } from './commands/status.js';
import { listTasks } from './commands/tasks.js';
import { openRecords } from './files/read-records.js';
import { createRoles } from './import/create-roles.js';
import { foreignFile } from './import/foreign-options.js';
import { importFile } from './import/import-file.js';
import { importServerSide, SERVER_SIDE_BYTES } from './import/server-side-import.js';
import { connect, type ServiceSettings } from './service-client.js';

const USAGE = `usage: userctl <command> [options]

  import FILE [--identifier email|phone_number|preferred_username] [--upsert] [--dry-run]
              [--format ndjson|json|csv] [--concurrency N] [--results FILE] [--state FILE]
              [--server-side]  (upload the file, import it as one task: always from 100 MiB)
              [--from auth0|firebase|cognito|clerk|keycloak]
              [--hash-key B64 --salt-separator B64 --rounds N --mem-cost N]  (firebase)
              [--hashes FILE]  (auth0: the password hash file Auth0 support delivers)
              [--plan] [--allow-loss FIELD]...  (with --from: what is kept, what stops the run)
              [--provider NAME=ALIAS]... [--roles-from PATH] [--groups-from PATH]
              [--attribute PATH=NAME]... [--create-roles]  (with --from: the tenant's own places)
  export --format csv|ndjson [--field POINTER[:NAME]]... [--escape-formulas] [--include-password-hashes] -o FILE
         [--then-follow]  (then write the changes after the export's snapshot to stdout, as changes --follow)
  changes [--after CURSOR] [--follow]  (the change feed as ndjson on stdout; from now without --after)
  status ID
  tasks [--kind import|export] [--status pending|completed|failed] [--limit N] [--all] [--json]
  replay --from TIME|OFFSET [--to TIME|OFFSET] [--project ID] [--upsert] [--dry-run]
${PROJECTS_USAGE}

service options (or environment): --url (USERCTL_URL), --token (USERCTL_TOKEN),
  --token-file (USERCTL_TOKEN_FILE), --host (USERCTL_HOST), --ca-file (USERCTL_CA_FILE).
  Against \`make start\` on this machine none are needed.
Each command takes only its own options and the service options; any other is refused (exit 2).
exit codes: 0 every record succeeded, 1 some failed, 2 usage, authentication or connection error,
  3 (import) every record succeeded, some with warnings or with source members left out.
`;

const SERVICE_OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  'token-file': { type: 'string' },
  host: { type: 'string' },
  'ca-file': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

// Each command takes its own options and refuses any other (exit 2, naming it): a flag of
// another command is never ignored, so `import --dry-run` cannot import for real unnoticed.
const IMPORT_OPTIONS = {
  identifier: { type: 'string', default: 'email' },
  upsert: { type: 'boolean', default: false },
  'dry-run': { type: 'boolean', default: false },
  format: { type: 'string' },
  // Upload the file and import it as one task (always for a file of SERVER_SIDE_BYTES or more).
  'server-side': { type: 'boolean', default: false },
  concurrency: { type: 'string', default: '4' },
  results: { type: 'string' },
  state: { type: 'string' },
  from: { type: 'string' },
  // import --from firebase: the project's hash parameters, as `firebase auth:import` takes them.
  'hash-key': { type: 'string' },
  'salt-separator': { type: 'string' },
  rounds: { type: 'string' },
  'mem-cost': { type: 'string' },
  // import --from auth0: the password hash file Auth0 support delivers beside the user export.
  hashes: { type: 'string' },
  // import --from: print what would be kept and left out, send nothing; accept a loss by name.
  plan: { type: 'boolean', default: false },
  'allow-loss': { type: 'string', multiple: true },
  // import --from: where this tenant keeps what its system has no field for.
  provider: { type: 'string', multiple: true },
  'roles-from': { type: 'string' },
  'groups-from': { type: 'string' },
  attribute: { type: 'string', multiple: true },
  'create-roles': { type: 'boolean', default: false },
} as const;

const EXPORT_OPTIONS = {
  format: { type: 'string' },
  field: { type: 'string', multiple: true },
  output: { type: 'string', short: 'o' },
  'include-password-hashes': { type: 'boolean', default: false },
  'escape-formulas': { type: 'boolean', default: false },
  'then-follow': { type: 'boolean', default: false },
} as const;

const CHANGES_OPTIONS = {
  after: { type: 'string' },
  follow: { type: 'boolean', default: false },
} as const;

const TASKS_OPTIONS = {
  kind: { type: 'string' },
  status: { type: 'string' },
  limit: { type: 'string', default: '20' },
  all: { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
} as const;

const REPLAY_OPTIONS = {
  from: { type: 'string' },
  project: { type: 'string' },
  to: { type: 'string' },
  upsert: { type: 'boolean', default: false },
  'dry-run': { type: 'boolean', default: false },
} as const;

/** The options of each command, beside the service options every command takes. */
const OPTIONS_OF = {
  import: IMPORT_OPTIONS,
  export: EXPORT_OPTIONS,
  changes: CHANGES_OPTIONS,
  status: {},
  tasks: TASKS_OPTIONS,
  replay: REPLAY_OPTIONS,
  projects: PROJECTS_OPTIONS,
} as const;
type Command = keyof typeof OPTIONS_OF;

const IDENTIFIERS = new Set(['email', 'phone_number', 'preferred_username']);

/**
 * The command's options and positionals, parsed strictly with its own options beside the service
 * options: an option it does not take is a usage error that names it.
 */
function parseCommand<O extends NonNullable<ParseArgsConfig['options']>>(
  argv: string[],
  command: Command,
  options: O,
) {
  const config = {
    args: argv,
    options: { ...SERVICE_OPTIONS, ...options } as typeof SERVICE_OPTIONS & O,
    allowPositionals: true as const,
    strict: true as const,
  };
  try {
    return parseArgs(config);
  } catch (err) {
    throw new CliError(`${command}: ${(err as Error).message}`);
  }
}

/** How to reach the service, from the service options (or the environment). */
function settingsOf(values: {
  url?: string | undefined;
  token?: string | undefined;
  'token-file'?: string | undefined;
  host?: string | undefined;
  'ca-file'?: string | undefined;
}): ServiceSettings {
  return {
    url: values.url ?? process.env.USERCTL_URL,
    token: values.token,
    tokenFile: values['token-file'],
    host: values.host ?? process.env.USERCTL_HOST,
    caFile: values['ca-file'] ?? process.env.USERCTL_CA_FILE,
  };
}

/**
 * The command: the first positional of a loose first reading, with every option any command
 * takes known, so that no option's value is taken for it.
 */
function commandOf(argv: string[]): string | undefined {
  const all = {
    ...SERVICE_OPTIONS,
    ...IMPORT_OPTIONS,
    ...EXPORT_OPTIONS,
    ...TASKS_OPTIONS,
    ...REPLAY_OPTIONS,
    ...PROJECTS_OPTIONS,
  };
  return parseArgs({ args: argv, options: all, allowPositionals: true, strict: false }).positionals[0];
}

async function main(argv: string[]): Promise<number> {
  const command = commandOf(argv);
  const asked = argv.includes('--help') || argv.includes('-h');
  if (command !== undefined && !(command in OPTIONS_OF))
    throw new CliError(
      `unknown command "${command}" (import, export, changes, status, tasks, replay, projects)`,
    );
  if (command === undefined || asked) {
    process.stdout.write(USAGE);
    return asked ? EXIT.ok : EXIT.unusable;
  }
  switch (command) {
    case 'import': {
      const { values, positionals } = parseCommand(argv, 'import', IMPORT_OPTIONS);
      const settings = settingsOf(values);
      const [, file, ...more] = positionals;
      if (!file || more.length > 0) throw new CliError('import takes one FILE');
      if (!IDENTIFIERS.has(values.identifier))
        throw new CliError(`--identifier must be one of ${[...IDENTIFIERS].join(', ')}`);
      const concurrency = Number(values.concurrency);
      if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) {
        throw new CliError('--concurrency must be a whole number from 1 to 64');
      }
      const from = foreignFile(values);
      // Clerk's users file is CSV whatever its name; Cognito's is list-users JSON or the CSV.
      const csvSource = from?.system === 'clerk' || (from?.system === 'cognito' && formatOf(file) !== 'json');
      const format = values.format ?? (csvSource ? 'csv' : formatOf(file));
      if (!['ndjson', 'json', 'csv'].includes(format))
        throw new CliError('--format must be ndjson, json or csv');
      const base = path.resolve(file);
      if (!from && (values.plan || values['allow-loss']))
        throw new CliError('--plan and --allow-loss go with --from');
      let plan: ImportPlan | undefined;
      if (from) {
        // Read once before anything is sent: what the file holds that the service cannot keep.
        if (from.system === 'cognito') process.stderr.write(`userctl: ${COGNITO_NOTICE}\n`);
        const allowed = new Set(values['allow-loss'] ?? []);
        plan = await planImport((await openRecords(base, format as RecordFormat, from)).records);
        if (values.plan) {
          process.stdout.write(`plan of ${file} (--from ${from.system}): ${planText(plan, allowed)}\n`);
          return EXIT.ok;
        }
        const losses = lossesThatStop(plan, allowed);
        if (losses.length > 0)
          throw new CliError(
            `import would lose ${losses.map((f) => `${f.field} (${f.dropped} records)`).join(', ')}: ` +
              '--plan shows every member; --allow-loss FIELD accepts the loss of one',
          );
      }
      if (values['server-side'] && from)
        throw new CliError('--server-side takes no --from: the service reads records, userctl converts them');
      const run = {
        file: base,
        format: format as RecordFormat,
        identifier: values.identifier,
        upsert: values.upsert,
        dryRun: values['dry-run'],
        concurrency,
        // A dry run keeps its own results and journal: it never stands for the run itself.
        resultsFile: values.results ?? `${base}${values['dry-run'] ? '.dry-run' : ''}.results.ndjson`,
        stateFile: values.state ?? `${base}${values['dry-run'] ? '.dry-run' : ''}.userctl-state`,
      };
      if (values['server-side'] || (!from && statSync(base).size >= SERVER_SIDE_BYTES))
        return withClient(settings, (client) => importServerSide(client, run));
      return withClient(settings, async (client) => {
        if (plan && values['create-roles'] && !values['dry-run']) {
          const made = await createRoles(client, plan);
          process.stderr.write(`userctl: ${made} roles and groups made that the project lacked\n`);
        }
        return importFile(client, { ...run, ...(from ? { from } : {}) });
      });
    }
    case 'export': {
      const { values, positionals } = parseCommand(argv, 'export', EXPORT_OPTIONS);
      const settings = settingsOf(values);
      if (positionals.length > 1) throw new CliError('export takes no FILE or ID (-o FILE names its file)');
      if (values.format !== 'csv' && values.format !== 'ndjson')
        throw new CliError('export needs --format csv or ndjson');
      if (!values.output) throw new CliError('export needs -o FILE');
      const { format, output } = values;
      return withClient(settings, (client) =>
        exportUsers(client, {
          format,
          fields: values.field ?? [],
          output,
          includePasswordHashes: values['include-password-hashes'],
          escapeFormulas: values['escape-formulas'],
          ...(values['then-follow']
            ? { thenFollow: (cursor: string) => readChanges(client, { after: cursor, follow: true }) }
            : {}),
        }),
      );
    }
    case 'changes': {
      const { values, positionals } = parseCommand(argv, 'changes', CHANGES_OPTIONS);
      const settings = settingsOf(values);
      if (positionals.length > 1)
        throw new CliError('changes takes no FILE or ID (--after CURSOR names where to start)');
      return withClient(settings, (client) =>
        readChanges(client, { after: values.after, follow: values.follow }),
      );
    }
    case 'status': {
      const { values, positionals } = parseCommand(argv, 'status', {});
      const settings = settingsOf(values);
      const [, ...rest] = positionals;
      const [id] = rest;
      if (!id || rest.length > 1) throw new CliError('status takes one task ID');
      return withClient(settings, (client) => printStatus(client, id));
    }
    case 'tasks': {
      const { values, positionals } = parseCommand(argv, 'tasks', TASKS_OPTIONS);
      const settings = settingsOf(values);
      if (positionals.length > 1) throw new CliError('tasks takes no FILE or ID');
      if (values.kind !== undefined && values.kind !== 'import' && values.kind !== 'export')
        throw new CliError('--kind must be import or export');
      const limit = Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 200)
        throw new CliError('--limit must be a whole number from 1 to 200');
      const kinds: readonly ('import' | 'export')[] =
        values.kind === 'import' ? ['import'] : values.kind === 'export' ? ['export'] : ['import', 'export'];
      return withClient(settings, (client) =>
        listTasks(client, { kinds, status: values.status, limit, all: values.all, json: values.json }),
      );
    }
    case 'replay': {
      const { values, positionals } = parseCommand(argv, 'replay', REPLAY_OPTIONS);
      if (positionals.length > 1) throw new CliError('replay takes no FILE or ID');
      if (!values.from) throw new CliError('replay needs --from TIME|OFFSET');
      return replay({
        from: values.from,
        to: values.to,
        project: values.project,
        upsert: values.upsert,
        dryRun: values['dry-run'],
      });
    }
    case 'projects':
      return projects(argv);
    default:
      throw new CliError(
        `unknown command "${command}" (import, export, changes, status, tasks, replay, projects)`,
      );
  }
}

async function withClient(
  settings: ServiceSettings,
  run: (client: Awaited<ReturnType<typeof connect>>) => Promise<number>,
) {
  const client = await connect(settings);
  try {
    return await run(client);
  } finally {
    await client.close();
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  if (err instanceof CliError) {
    process.stderr.write(`userctl: ${err.message}\n`);
    process.exitCode = err.exitCode;
  } else {
    process.stderr.write(`userctl: ${(err as Error).message ?? String(err)}\n`);
    process.exitCode = EXIT.unusable;
  }
}
