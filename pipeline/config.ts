import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type ConfigDocument, type ProjectConfigDocument, validateConfig } from '../schemas/index.js';
import { ConfigError } from './errors.js';

export type LoginIdKey = 'email' | 'username' | 'phone';

/** A project's settings, as used by the service. */
export interface ProjectConfig {
  readonly id: string;
  /** The `Host` admin calls must name (port ignored). */
  readonly domain: string;
  /** The `aud` every admin JWT must carry. */
  readonly publicOrigin: string;
  readonly claimsNamespace: string;
  readonly adminApi: {
    /** JWKS given in the project file; absent means ADMIN_JWKS_FILE or the development key pair. */
    readonly jwks: { readonly keys: readonly Record<string, unknown>[] } | undefined;
    readonly algorithms: readonly string[];
  };
  readonly loginIdKeys: ReadonlyMap<LoginIdKey, { readonly caseSensitive: boolean }>;
  /** Provider alias -> provider type. */
  readonly oauthProviders: ReadonlyMap<string, string>;
  readonly customAttributes: ReadonlyMap<
    string,
    { readonly type: string; readonly enum?: readonly string[] }
  >;
}

/** The whole configuration, read once at start, validated and frozen. */
export interface ServiceConfig {
  readonly port: number;
  /** Absent: the embedded Postgres under `dataDir` is started. */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  /** Port of the embedded Postgres (used only when databaseUrl is absent). */
  readonly embeddedPostgresPort: number;
  readonly trustProxy: boolean;
  readonly logLevel: string;
  readonly adminJwksFile: string | undefined;
  /** Kafka brokers; empty: the embedded task bus (a Postgres table). */
  readonly kafkaBrokers: readonly string[];
  /** Prefix of the task topics and consumer groups, to share a cluster between deployments. */
  readonly kafkaTopicPrefix: string;
  readonly kafkaSessionTimeoutMs: number;
  /** How long a completed task (its details, input and file) is kept: 24 h (spec 8). */
  readonly taskRetentionSeconds: number;
  /** Import records applied per transaction. */
  readonly importBatchSize: number;
  /** Tasks of one kind that a worker process runs at once. */
  readonly workerConcurrency: number;
  readonly export: ExportConfig;
  readonly project: ProjectConfig;
}

/** Where export files go, and the limits of spec 8 around them. */
export interface ExportConfig {
  /** False: both export endpoints answer UserExportDisabled. */
  readonly enabled: boolean;
  /** Absent: the embedded default starts Azurite; a configured DATABASE_URL means export is off. */
  readonly blobStorage: BlobStorageConfig | undefined;
  readonly container: string;
  readonly embeddedAzuritePort: number;
  readonly downloadUrlSeconds: number;
  readonly maxConcurrent: number;
  readonly rateLimit: { readonly count: number; readonly periodSeconds: number };
}

export type BlobStorageConfig =
  | { readonly connectionString: string }
  | { readonly accountName: string; readonly accountKey: string };

/** The environment variables read, each mapped to its key in the configuration schema. */
const ENV_KEYS = {
  PORT: 'port',
  DATABASE_URL: 'database_url',
  DATA_DIR: 'data_dir',
  EMBEDDED_POSTGRES_PORT: 'embedded_postgres_port',
  TRUST_PROXY: 'trust_proxy',
  LOG_LEVEL: 'log_level',
  ADMIN_JWKS_FILE: 'admin_jwks_file',
  KAFKA_BROKERS: 'kafka_brokers',
  KAFKA_TOPIC_PREFIX: 'kafka_topic_prefix',
  KAFKA_SESSION_TIMEOUT_MS: 'kafka_session_timeout_ms',
  TASK_RETENTION_SECONDS: 'task_retention_seconds',
  IMPORT_BATCH_SIZE: 'import_batch_size',
  WORKER_CONCURRENCY: 'worker_concurrency',
  EXPORT_ENABLED: 'export_enabled',
  AZURE_STORAGE_CONNECTION_STRING: 'azure_storage_connection_string',
  AZURE_STORAGE_ACCOUNT_NAME: 'azure_storage_account_name',
  AZURE_STORAGE_ACCOUNT_KEY: 'azure_storage_account_key',
  AZURE_STORAGE_CONTAINER: 'azure_storage_container',
  EMBEDDED_AZURITE_PORT: 'embedded_azurite_port',
  EXPORT_DOWNLOAD_URL_SECONDS: 'export_download_url_seconds',
  EXPORT_MAX_CONCURRENT: 'export_max_concurrent',
  EXPORT_RATE_LIMIT: 'export_rate_limit',
  EXPORT_RATE_LIMIT_PERIOD_SECONDS: 'export_rate_limit_period_seconds',
} as const;

/** Reads the configuration from the environment and the project file named by PROJECT_CONFIG. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  const raw: Record<string, unknown> = {};
  for (const [variable, key] of Object.entries(ENV_KEYS)) {
    const value = env[variable];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  raw.project = env.PROJECT_CONFIG ? readProjectFile(env.PROJECT_CONFIG) : {};
  return configFromDocument(raw);
}

/** Validates a configuration document (the schema's shape) and freezes it. */
export function configFromDocument(raw: Record<string, unknown>): ServiceConfig {
  const doc = structuredClone(raw);
  if (!validateConfig(doc)) {
    const problems = (validateConfig.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  return deepFreeze(toServiceConfig(doc));
}

function readProjectFile(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (cause) {
    throw new ConfigError(`cannot read PROJECT_CONFIG ${file}: ${(cause as Error).message}`);
  }
}

function toServiceConfig(doc: ConfigDocument): ServiceConfig {
  return {
    port: doc.port,
    databaseUrl: doc.database_url,
    dataDir: path.resolve(doc.data_dir),
    embeddedPostgresPort: doc.embedded_postgres_port,
    trustProxy: doc.trust_proxy,
    logLevel: doc.log_level,
    adminJwksFile: doc.admin_jwks_file,
    kafkaBrokers: doc.kafka_brokers ? doc.kafka_brokers.split(',') : [],
    kafkaTopicPrefix: doc.kafka_topic_prefix,
    kafkaSessionTimeoutMs: doc.kafka_session_timeout_ms,
    taskRetentionSeconds: doc.task_retention_seconds,
    importBatchSize: doc.import_batch_size,
    workerConcurrency: doc.worker_concurrency,
    export: {
      enabled: doc.export_enabled,
      blobStorage: blobStorage(doc),
      container: doc.azure_storage_container,
      embeddedAzuritePort: doc.embedded_azurite_port,
      downloadUrlSeconds: doc.export_download_url_seconds,
      maxConcurrent: doc.export_max_concurrent,
      rateLimit: { count: doc.export_rate_limit, periodSeconds: doc.export_rate_limit_period_seconds },
    },
    project: toProjectConfig(doc.project, doc.port),
  };
}

function blobStorage(doc: ConfigDocument): BlobStorageConfig | undefined {
  if (doc.azure_storage_connection_string) return { connectionString: doc.azure_storage_connection_string };
  if (doc.azure_storage_account_name && doc.azure_storage_account_key) {
    return { accountName: doc.azure_storage_account_name, accountKey: doc.azure_storage_account_key };
  }
  return undefined;
}

function toProjectConfig(p: ProjectConfigDocument, port: number): ProjectConfig {
  return {
    id: p.id,
    domain: p.domain,
    publicOrigin: p.public_origin ?? `http://localhost:${port}`,
    claimsNamespace: p.claims_namespace,
    adminApi: { jwks: p.admin_api.jwks, algorithms: p.admin_api.algorithms },
    loginIdKeys: new Map(p.login_id_keys.map((k) => [k.key, { caseSensitive: k.case_sensitive }])),
    oauthProviders: new Map(p.oauth_providers.map((o) => [o.alias, o.type])),
    customAttributes: new Map(
      p.custom_attributes.map((a) => [a.name, a.enum ? { type: a.type, enum: a.enum } : { type: a.type }]),
    ),
  };
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
