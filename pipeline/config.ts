import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ErrorObject } from 'ajv';
import {
  type ConfigDocument,
  configSchema,
  type ProjectConfigDocument,
  validateConfig,
} from '../schemas/index.js';
import type { FirebaseScryptParams } from '../schemas/password-formats.js';
import { ConfigError } from './errors.js';
import { networkPolicy } from './network-policy.js';

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
  /** The endpoints told of task events; their ids are unique. */
  readonly webhooks: readonly WebhookEndpoint[];
  /** The project's own limits; each absent one is the deployment's (`withProject`). */
  readonly limits: {
    readonly importPendingRecords?: number;
    /** Tasks of each kind it runs at once. */
    readonly runningTasks?: number;
    readonly exportMaxConcurrent?: number;
    readonly exportRateLimit?: number;
    readonly exportRateLimitPeriodSeconds?: number;
  };
  readonly passwordHashes: {
    /** An export may write the stored hashes when its request asks for them. */
    readonly exportAllowed: boolean;
    readonly firebaseScrypt: FirebaseScryptParams | undefined;
  };
}

/** A webhook endpoint of the project: where it is, the key its bodies are signed with, what it wants. */
export interface WebhookEndpoint {
  readonly id: string;
  readonly url: string;
  readonly secret: string;
  readonly events: readonly string[];
}

/** How webhook deliveries are made and retried. */
export interface WebhookConfig {
  readonly timeoutMs: number;
  readonly retryFirstMs: number;
  readonly retryMaxMs: number;
  readonly giveUpSeconds: number;
  readonly concurrency: number;
  /** Hosts and CIDRs deliveries may reach besides public addresses (network-policy.ts). */
  readonly allowedHosts: readonly string[];
}

/** Where users(searchKeyword) is answered: ClickHouse when configured, else Postgres. */
export interface SearchConfig {
  readonly clickhouse?: { readonly url: string; readonly database: string };
}

/** How the service's Kafka topics are made: settings, with defaults that fit three brokers. */
export interface KafkaTopicSettings {
  readonly partitions: number;
  readonly replicationFactor: number;
  /** Brokers that must hold a write before it is acknowledged (the producers ask for all). */
  readonly minInsyncReplicas: number;
}

/** The whole configuration, read once at start, validated and frozen. */
export interface ServiceConfig {
  readonly port: number;
  /** Absent: the embedded Postgres under `dataDir` is started. */
  readonly databaseUrl: string | undefined;
  /** A hot standby of databaseUrl: exports read it once it has replayed past their request. */
  readonly databaseReadUrl: string | undefined;
  readonly dataDir: string;
  /** Port of the embedded Postgres (used only when databaseUrl is absent). */
  readonly embeddedPostgresPort: number;
  readonly trustProxy: boolean;
  /** HTTPS beside plain HTTP: its port, and the certificate files (absent: self-signed on the embedded default). */
  readonly https: { readonly port: number; readonly certFile?: string; readonly keyFile?: string };
  /** The worker process's health and metrics port; 0: not served. */
  readonly pipelineHttpPort: number;
  /** The API process's health and metrics port, apart from the public one; 0: not served. */
  readonly apiOperatorPort: number;
  readonly logLevel: string;
  readonly adminJwksFile: string | undefined;
  /** Keys made in the data folder are allowed outside the embedded default (DEVELOPMENT_KEYS). */
  readonly developmentKeys: boolean;
  /** Kafka brokers; empty: the embedded task bus (a Postgres table). */
  readonly kafkaBrokers: readonly string[];
  /** Prefix of the task topics and consumer groups, to share a cluster between deployments. */
  readonly kafkaTopicPrefix: string;
  readonly kafkaSessionTimeoutMs: number;
  /** TLS and SASL to the brokers (a managed cluster); absent: plain, unauthenticated. */
  readonly kafkaSecurity: KafkaSecurity;
  /** How the service's topics are made: partitions, replicas, min.insync.replicas. */
  readonly kafkaTopics: KafkaTopicSettings;
  /** How long a completed task (its details and file) is kept: 24 h (decisions 8). */
  readonly taskRetentionSeconds: number;
  /** How long the import log keeps each request (the reach of a replay). */
  readonly importLogRetentionSeconds: number;
  /** How long the change feed keeps an event (docs/changes.md): an older cursor answers 410. */
  readonly changesRetentionSeconds: number;
  /**
   * Whether the workers publish the change feed to the `<prefix>user-events` topic: each changed
   * user's record is read again for it, work as large as the writes themselves.
   */
  readonly changesKafkaTopic: boolean;
  /** File imports: an upload URL's life, the largest file, how long a sealed copy is kept. */
  readonly importFiles: {
    readonly uploadSeconds: number;
    readonly maxBytes: number;
    readonly retentionSeconds: number;
    readonly openUploadsLimit: number;
    /** A file larger than this is split into parts, at most partsMax. */
    readonly partBytes: number;
    readonly partsMax: number;
  };
  /** How long a worker's claim on a task lasts unless renewed. */
  readonly taskLeaseSeconds: number;
  /** A task whose lease lapsed this many times ends TaskExpired. */
  readonly taskMaxLapses: number;
  /** An attempt without progress this long gives up its lease (tasks/task-lease.ts). */
  readonly taskStallSeconds: number;
  /** How long a stopping process waits for its tasks to hand over before it exits 1. */
  readonly shutdownGraceSeconds: number;
  /** How long a task retries through transient faults before it fails. */
  readonly taskRetrySeconds: number;
  /** The key sealing stored secrets (base64); absent: a key kept in the data folder. */
  readonly taskSecrets: { readonly key: string | undefined; readonly previousKeys: readonly string[] };
  /** Import records applied per transaction. */
  readonly importBatchSize: number;
  /** statement_timeout of the connections that serve admin requests. */
  readonly requestStatementTimeoutMs: number;
  /** A service process applies the migrations at start (always on the embedded default). */
  readonly migrateOnStart: boolean;
  /** TCP keepalive of every Postgres connection after this long idle; 0: off. */
  readonly databaseKeepaliveSeconds: number;
  /** lock_timeout, idle_in_transaction_session_timeout and statement_timeout of worker connections (ms; 0: off). */
  readonly databaseTimeouts: DatabaseTimeouts;
  /** The index behind users(searchKeyword). */
  readonly search: SearchConfig;
  /** Records of pending imports past which a new import is refused (429) until they drain. */
  readonly importPendingRecordsLimit: number;
  /**
   * Tasks of each kind one project runs at once across the deployment, unless its file sets its
   * own (stored with it, and read by the claim); 0: no bound.
   */
  readonly projectRunningTasksLimit: number;
  /** Tasks of one kind that a worker process runs at once. */
  readonly workerConcurrency: number;
  /** How far the old generation may grow between full collections while an import runs (heap-growth.ts). */
  readonly importHeapGrowingPercent: number;
  readonly export: ExportConfig;
  readonly webhooks: WebhookConfig;
  /** The project this process was configured with: the embedded default's, and the one registered at start. */
  readonly project: ProjectConfig;
  /** Its project file (defaults filled in) when one was given; absent: the default project. */
  readonly projectDocument: Record<string, unknown> | undefined;
}

/** Session timeouts of the connections of workers and upkeep, in milliseconds; 0: off. */
export interface DatabaseTimeouts {
  readonly lockMs: number;
  readonly idleInTransactionMs: number;
  readonly statementMs: number;
}

/** How a Kafka client proves itself: TLS (with a CA and a client certificate) and SASL. */
export interface KafkaSecurity {
  readonly ssl?: { readonly caFile?: string; readonly certFile?: string; readonly keyFile?: string };
  readonly sasl?: {
    readonly mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512';
    readonly username: string;
    readonly password: string;
  };
}

/** Where export files go, and the limits of decisions 8 around them. */
export interface ExportConfig {
  /** False: both export endpoints answer UserExportDisabled. */
  readonly enabled: boolean;
  /** Absent: the embedded default starts Azurite; a configured DATABASE_URL means export is off. */
  readonly blobStorage: BlobStorageConfig | undefined;
  readonly container: string;
  readonly embeddedAzuritePort: number;
  readonly downloadUrlSeconds: number;
  readonly maxConcurrent: number;
  /** An export running longer than this ends TaskTimedOut. */
  readonly timeLimitSeconds: number;
  /** Users per part of a split export (several workers write one file); 0: never split. */
  readonly partUsers: number;
  /**
   * Export readers at once in the whole deployment (coordinators before they know their export is
   * split, and parts being written): the rest wait, so exports never starve lookups.
   */
  readonly readersMax: number;
  /** How long an export waits for the standby (databaseReadUrl) to replay past its request. */
  readonly standbyWaitSeconds: number;
  readonly rateLimit: { readonly count: number; readonly periodSeconds: number };
}

export type BlobStorageConfig =
  | { readonly connectionString: string }
  | { readonly accountName: string; readonly accountKey: string };

/** The environment variables read, each mapped to its key in the configuration schema. */
const ENV_KEYS = {
  PORT: 'port',
  DATABASE_URL: 'database_url',
  DATABASE_READ_URL: 'database_read_url',
  DATA_DIR: 'data_dir',
  EMBEDDED_POSTGRES_PORT: 'embedded_postgres_port',
  TRUST_PROXY: 'trust_proxy',
  HTTPS_PORT: 'https_port',
  TLS_CERT_FILE: 'tls_cert_file',
  TLS_KEY_FILE: 'tls_key_file',
  PIPELINE_HTTP_PORT: 'pipeline_http_port',
  API_OPERATOR_PORT: 'api_operator_port',
  IMPORT_PENDING_RECORDS_LIMIT: 'import_pending_records_limit',
  PROJECT_RUNNING_TASKS_LIMIT: 'project_running_tasks_limit',
  LOG_LEVEL: 'log_level',
  ADMIN_JWKS_FILE: 'admin_jwks_file',
  DEVELOPMENT_KEYS: 'development_keys',
  KAFKA_BROKERS: 'kafka_brokers',
  KAFKA_TOPIC_PREFIX: 'kafka_topic_prefix',
  KAFKA_SESSION_TIMEOUT_MS: 'kafka_session_timeout_ms',
  KAFKA_SSL: 'kafka_ssl',
  KAFKA_SSL_CA_FILE: 'kafka_ssl_ca_file',
  KAFKA_SSL_CERT_FILE: 'kafka_ssl_cert_file',
  KAFKA_SSL_KEY_FILE: 'kafka_ssl_key_file',
  KAFKA_SASL_MECHANISM: 'kafka_sasl_mechanism',
  KAFKA_SASL_USERNAME: 'kafka_sasl_username',
  KAFKA_SASL_PASSWORD: 'kafka_sasl_password',
  KAFKA_PARTITIONS: 'kafka_partitions',
  KAFKA_REPLICATION_FACTOR: 'kafka_replication_factor',
  KAFKA_MIN_INSYNC_REPLICAS: 'kafka_min_insync_replicas',
  TASK_RETENTION_SECONDS: 'task_retention_seconds',
  IMPORT_LOG_RETENTION_SECONDS: 'import_log_retention_seconds',
  CHANGES_RETENTION_SECONDS: 'changes_retention_seconds',
  CHANGES_KAFKA_TOPIC: 'changes_kafka_topic',
  IMPORT_UPLOAD_SECONDS: 'import_upload_seconds',
  IMPORT_FILE_MAX_BYTES: 'import_file_max_bytes',
  IMPORT_FILE_RETENTION_SECONDS: 'import_file_retention_seconds',
  IMPORT_UPLOADS_OPEN_LIMIT: 'import_uploads_open_limit',
  IMPORT_FILE_PART_BYTES: 'import_file_part_bytes',
  IMPORT_FILE_PARTS_MAX: 'import_file_parts_max',
  TASK_LEASE_SECONDS: 'task_lease_seconds',
  TASK_MAX_LAPSES: 'task_max_lapses',
  TASK_STALL_SECONDS: 'task_stall_seconds',
  SHUTDOWN_GRACE_SECONDS: 'shutdown_grace_seconds',
  TASK_RETRY_SECONDS: 'task_retry_seconds',
  TASK_SECRETS_KEY: 'task_secrets_key',
  TASK_SECRETS_PREVIOUS_KEYS: 'task_secrets_previous_keys',
  EXPORT_TIME_LIMIT_SECONDS: 'export_time_limit_seconds',
  IMPORT_BATCH_SIZE: 'import_batch_size',
  REQUEST_STATEMENT_TIMEOUT_MS: 'request_statement_timeout_ms',
  DATABASE_KEEPALIVE_SECONDS: 'database_keepalive_seconds',
  DATABASE_LOCK_TIMEOUT_MS: 'database_lock_timeout_ms',
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: 'database_idle_in_transaction_timeout_ms',
  DATABASE_STATEMENT_TIMEOUT_MS: 'database_statement_timeout_ms',
  MIGRATE_ON_START: 'migrate_on_start',
  CLICKHOUSE_URL: 'clickhouse_url',
  CLICKHOUSE_DATABASE: 'clickhouse_database',
  WORKER_CONCURRENCY: 'worker_concurrency',
  IMPORT_HEAP_GROWING_PERCENT: 'import_heap_growing_percent',
  EXPORT_ENABLED: 'export_enabled',
  AZURE_STORAGE_CONNECTION_STRING: 'azure_storage_connection_string',
  AZURE_STORAGE_ACCOUNT_NAME: 'azure_storage_account_name',
  AZURE_STORAGE_ACCOUNT_KEY: 'azure_storage_account_key',
  AZURE_STORAGE_CONTAINER: 'azure_storage_container',
  EMBEDDED_AZURITE_PORT: 'embedded_azurite_port',
  EXPORT_DOWNLOAD_URL_SECONDS: 'export_download_url_seconds',
  EXPORT_MAX_CONCURRENT: 'export_max_concurrent',
  EXPORT_PART_USERS: 'export_part_users',
  EXPORT_READERS_MAX: 'export_readers_max',
  EXPORT_STANDBY_WAIT_SECONDS: 'export_standby_wait_seconds',
  EXPORT_RATE_LIMIT: 'export_rate_limit',
  EXPORT_RATE_LIMIT_PERIOD_SECONDS: 'export_rate_limit_period_seconds',
  WEBHOOK_TIMEOUT_MS: 'webhook_timeout_ms',
  WEBHOOK_RETRY_FIRST_MS: 'webhook_retry_first_ms',
  WEBHOOK_RETRY_MAX_MS: 'webhook_retry_max_ms',
  WEBHOOK_GIVE_UP_SECONDS: 'webhook_give_up_seconds',
  WEBHOOK_CONCURRENCY: 'webhook_concurrency',
  WEBHOOK_ALLOWED_HOSTS: 'webhook_allowed_hosts',
} as const;

/** Every environment variable the service reads (besides PROJECT_CONFIG). */
export const CONFIG_VARIABLES: readonly string[] = [...Object.keys(ENV_KEYS), 'PROJECT_CONFIG'];

/** Boolean variables also take 1 and 0, as docs/decisions.md writes TRUST_PROXY. */
const BOOLEAN_WORDS: Readonly<Record<string, string>> = { '1': 'true', '0': 'false' };

/** Reads the configuration from the environment and the project file named by PROJECT_CONFIG. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  const raw: Record<string, unknown> = {};
  for (const [variable, key] of Object.entries(ENV_KEYS)) {
    const value = env[variable]?.trim();
    if (value === undefined || value === '') continue;
    const isBoolean = (configSchema.properties as Record<string, PropertyRule>)[key]?.type === 'boolean';
    raw[key] = isBoolean ? (BOOLEAN_WORDS[value] ?? value.toLowerCase()) : value;
  }
  raw.project = env.PROJECT_CONFIG ? readProjectFile(env.PROJECT_CONFIG) : {};
  return configFromDocument(raw);
}

/**
 * A project file's document (a registered project's, `name` saying which in messages) as the
 * service uses it: checked as PROJECT_CONFIG is, against the deployment's settings that bear on a
 * project (the webhook network policy, and the port of the default public origin).
 */
export function projectFromDocument(
  document: unknown,
  name: string,
  deployment: Pick<ServiceConfig, 'port' | 'webhooks'>,
): ProjectConfig {
  const allowed = deployment.webhooks.allowedHosts.join(',');
  try {
    return configFromDocument({
      port: deployment.port,
      ...(allowed ? { webhook_allowed_hosts: allowed } : {}),
      project: document,
    }).project;
  } catch (err) {
    if (err instanceof ConfigError) throw new ConfigError(err.message.replaceAll('PROJECT_CONFIG', name));
    throw err;
  }
}

/**
 * The configuration one project's requests and tasks run with: the deployment's settings, the
 * project's own, and each limit the project's file sets in place of the deployment's.
 */
export function withProject(deployment: ServiceConfig, project: ProjectConfig): ServiceConfig {
  const { limits } = project;
  const { rateLimit } = deployment.export;
  return {
    ...deployment,
    project,
    importPendingRecordsLimit: limits.importPendingRecords ?? deployment.importPendingRecordsLimit,
    projectRunningTasksLimit: limits.runningTasks ?? deployment.projectRunningTasksLimit,
    export: {
      ...deployment.export,
      maxConcurrent: limits.exportMaxConcurrent ?? deployment.export.maxConcurrent,
      rateLimit: {
        count: limits.exportRateLimit ?? rateLimit.count,
        periodSeconds: limits.exportRateLimitPeriodSeconds ?? rateLimit.periodSeconds,
      },
    },
  };
}

/**
 * Whether the process runs on the embedded default: no Postgres, Kafka or blob storage of a
 * deployment is configured.
 */
export function isEmbeddedDefault(config: ServiceConfig): boolean {
  return config.databaseUrl === undefined && config.kafkaBrokers.length === 0 && !config.export.blobStorage;
}

/**
 * Fails closed outside the embedded default: keys made per host would differ between the hosts of
 * one deployment (a worker could not open what another host's API sealed) and would let anyone
 * holding one host's data folder sign admin tokens. Every process needs TASK_SECRETS_KEY; the API
 * also needs the admin public keys. DEVELOPMENT_KEYS=true allows the keys of the data folder.
 */
export function requireDeploymentKeys(config: ServiceConfig, role: 'api' | 'worker'): void {
  if (isEmbeddedDefault(config) || config.developmentKeys) return;
  const missing: string[] = [];
  if (!config.taskSecrets.key) missing.push('TASK_SECRETS_KEY');
  if (role === 'api' && !config.project.adminApi.jwks && !config.adminJwksFile)
    missing.push('ADMIN_JWKS_FILE (or the project file admin_api.jwks)');
  if (missing.length > 0) {
    throw new ConfigError(
      `missing outside the embedded default (DATABASE_URL, KAFKA_BROKERS or blob storage set): ${missing.join(', ')}`,
    );
  }
}

/** Validates a configuration document (the schema's shape) and freezes it. */
export function configFromDocument(raw: Record<string, unknown>): ServiceConfig {
  const doc = structuredClone(raw);
  if (!validateConfig(doc)) {
    const problems = (validateConfig.errors ?? []).map(describeProblem);
    throw new ConfigError(`invalid configuration: ${[...new Set(problems)].join('; ')}`);
  }
  // A write could never be acknowledged by more replicas than a partition has.
  if (doc.kafka_min_insync_replicas > doc.kafka_replication_factor) {
    throw new ConfigError(
      'invalid configuration: KAFKA_MIN_INSYNC_REPLICAS must not be more than KAFKA_REPLICATION_FACTOR',
    );
  }
  // SASL without its credentials, or a client certificate without its key, cannot connect.
  if (doc.kafka_sasl_mechanism && !(doc.kafka_sasl_username && doc.kafka_sasl_password)) {
    throw new ConfigError(
      'invalid configuration: KAFKA_SASL_MECHANISM needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD',
    );
  }
  if (Boolean(doc.kafka_ssl_cert_file) !== Boolean(doc.kafka_ssl_key_file)) {
    throw new ConfigError(
      'invalid configuration: KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE must be set together',
    );
  }
  // Two deployments on one cluster would take each other's task messages and drop them.
  const webhookIds = doc.project.webhooks.map((w) => w.id);
  if (new Set(webhookIds).size !== webhookIds.length) {
    throw new ConfigError('invalid configuration: PROJECT_CONFIG webhooks must have unique ids');
  }
  webhookUrlProblems(doc.project.webhooks, doc.webhook_allowed_hosts);
  if (doc.kafka_brokers && doc.kafka_topic_prefix === '') {
    throw new ConfigError(
      'invalid configuration: KAFKA_TOPIC_PREFIX must be set with KAFKA_BROKERS (one prefix per deployment)',
    );
  }
  const declared = Object.keys((raw.project as object | undefined) ?? {}).length > 0;
  return deepFreeze({ ...toServiceConfig(doc), projectDocument: declared ? doc.project : undefined });
}

/**
 * Refuses, at start, a webhook URL that deliveries could never send to: one the URL parser cannot
 * read, with user info, not https://, or naming an address that is not public (unless
 * WEBHOOK_ALLOWED_HOSTS lists it). The problem names the endpoint's id, never its URL.
 */
function webhookUrlProblems(
  endpoints: readonly { id: string; url: string }[],
  allowedHosts: string | undefined,
) {
  let policy: ReturnType<typeof networkPolicy>;
  try {
    policy = networkPolicy(allowedHosts ? allowedHosts.split(',') : []);
  } catch {
    throw new ConfigError('invalid configuration: WEBHOOK_ALLOWED_HOSTS must list host names and CIDRs');
  }
  for (const endpoint of endpoints) {
    const problem = policy.urlProblem(endpoint.url);
    if (problem)
      throw new ConfigError(`invalid configuration: PROJECT_CONFIG webhook ${endpoint.id}: url ${problem}`);
  }
}

const VARIABLE_OF_KEY = new Map<string, string>(
  Object.entries(ENV_KEYS).map(([variable, key]) => [key, variable]),
);

/**
 * One problem as its user wrote it: the environment variable (or the project file's member) and
 * the rule it breaks, e.g. `PORT must be an integer from 1 to 65535`.
 */
function describeProblem(error: ErrorObject): string {
  const [, top = '', ...rest] = error.instancePath.split('/');
  const variable = VARIABLE_OF_KEY.get(top);
  const where =
    variable ??
    (top === 'project'
      ? `PROJECT_CONFIG ${rest.length > 0 ? rest.join('.') : '(the file)'}`
      : error.instancePath || 'configuration');
  const property = variable ? (configSchema.properties as Record<string, PropertyRule>)[top] : undefined;
  return `${where} ${property ? ruleOf(property, error) : (error.message ?? error.keyword)}`;
}

interface PropertyRule {
  readonly type?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly enum?: readonly string[];
}

function ruleOf(rule: PropertyRule, error: ErrorObject): string {
  if (rule.enum) return `must be one of ${rule.enum.join(', ')}`;
  if (rule.type === 'boolean') return 'must be true, false, 1 or 0';
  if (rule.type === 'integer') {
    return rule.maximum === undefined
      ? `must be an integer of at least ${rule.minimum ?? 0}`
      : `must be an integer from ${rule.minimum ?? 0} to ${rule.maximum}`;
  }
  return error.keyword === 'pattern' ? 'has an invalid format' : (error.message ?? error.keyword);
}

function kafkaSecurity(doc: ConfigDocument): KafkaSecurity {
  const files = {
    ...(doc.kafka_ssl_ca_file ? { caFile: doc.kafka_ssl_ca_file } : {}),
    ...(doc.kafka_ssl_cert_file ? { certFile: doc.kafka_ssl_cert_file } : {}),
    ...(doc.kafka_ssl_key_file ? { keyFile: doc.kafka_ssl_key_file } : {}),
  };
  const ssl = doc.kafka_ssl || Object.keys(files).length > 0;
  return {
    ...(ssl ? { ssl: files } : {}),
    ...(doc.kafka_sasl_mechanism && doc.kafka_sasl_username && doc.kafka_sasl_password
      ? {
          sasl: {
            mechanism: doc.kafka_sasl_mechanism,
            username: doc.kafka_sasl_username,
            password: doc.kafka_sasl_password,
          },
        }
      : {}),
  };
}

/** The JSON document of a project file (PROJECT_CONFIG). */
export function readProjectFile(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (cause) {
    throw new ConfigError(`cannot read PROJECT_CONFIG ${file}: ${(cause as Error).message}`);
  }
}

function toServiceConfig(doc: ConfigDocument): Omit<ServiceConfig, 'projectDocument'> {
  return {
    port: doc.port,
    databaseUrl: doc.database_url,
    databaseReadUrl: doc.database_read_url,
    dataDir: path.resolve(doc.data_dir),
    embeddedPostgresPort: doc.embedded_postgres_port,
    trustProxy: doc.trust_proxy,
    https: {
      port: doc.https_port,
      ...(doc.tls_cert_file && doc.tls_key_file
        ? { certFile: doc.tls_cert_file, keyFile: doc.tls_key_file }
        : {}),
    },
    pipelineHttpPort: doc.pipeline_http_port,
    apiOperatorPort: doc.api_operator_port,
    logLevel: doc.log_level,
    adminJwksFile: doc.admin_jwks_file,
    developmentKeys: doc.development_keys,
    kafkaBrokers: doc.kafka_brokers ? doc.kafka_brokers.split(',') : [],
    kafkaTopicPrefix: doc.kafka_topic_prefix,
    kafkaSessionTimeoutMs: doc.kafka_session_timeout_ms,
    kafkaSecurity: kafkaSecurity(doc),
    kafkaTopics: {
      partitions: doc.kafka_partitions,
      replicationFactor: doc.kafka_replication_factor,
      minInsyncReplicas: doc.kafka_min_insync_replicas,
    },
    taskRetentionSeconds: doc.task_retention_seconds,
    importLogRetentionSeconds: doc.import_log_retention_seconds,
    changesRetentionSeconds: doc.changes_retention_seconds,
    changesKafkaTopic: doc.changes_kafka_topic,
    importFiles: {
      uploadSeconds: doc.import_upload_seconds,
      maxBytes: doc.import_file_max_bytes,
      retentionSeconds: doc.import_file_retention_seconds,
      openUploadsLimit: doc.import_uploads_open_limit,
      partBytes: doc.import_file_part_bytes,
      partsMax: doc.import_file_parts_max,
    },
    taskLeaseSeconds: doc.task_lease_seconds,
    taskMaxLapses: doc.task_max_lapses,
    taskStallSeconds: doc.task_stall_seconds,
    shutdownGraceSeconds: doc.shutdown_grace_seconds,
    taskRetrySeconds: doc.task_retry_seconds,
    taskSecrets: {
      key: doc.task_secrets_key,
      previousKeys: doc.task_secrets_previous_keys ? doc.task_secrets_previous_keys.split(',') : [],
    },
    importBatchSize: doc.import_batch_size,
    requestStatementTimeoutMs: doc.request_statement_timeout_ms,
    databaseKeepaliveSeconds: doc.database_keepalive_seconds,
    databaseTimeouts: {
      lockMs: doc.database_lock_timeout_ms,
      idleInTransactionMs: doc.database_idle_in_transaction_timeout_ms,
      statementMs: doc.database_statement_timeout_ms,
    },
    migrateOnStart: doc.migrate_on_start,
    search: doc.clickhouse_url
      ? { clickhouse: { url: doc.clickhouse_url, database: doc.clickhouse_database } }
      : {},
    importPendingRecordsLimit: doc.import_pending_records_limit,
    projectRunningTasksLimit: doc.project_running_tasks_limit,
    workerConcurrency: doc.worker_concurrency,
    importHeapGrowingPercent: doc.import_heap_growing_percent,
    export: {
      enabled: doc.export_enabled,
      blobStorage: blobStorage(doc),
      container: doc.azure_storage_container,
      embeddedAzuritePort: doc.embedded_azurite_port,
      downloadUrlSeconds: doc.export_download_url_seconds,
      maxConcurrent: doc.export_max_concurrent,
      partUsers: doc.export_part_users,
      readersMax: doc.export_readers_max,
      standbyWaitSeconds: doc.export_standby_wait_seconds,
      timeLimitSeconds: doc.export_time_limit_seconds,
      rateLimit: { count: doc.export_rate_limit, periodSeconds: doc.export_rate_limit_period_seconds },
    },
    webhooks: {
      timeoutMs: doc.webhook_timeout_ms,
      retryFirstMs: doc.webhook_retry_first_ms,
      retryMaxMs: doc.webhook_retry_max_ms,
      giveUpSeconds: doc.webhook_give_up_seconds,
      concurrency: doc.webhook_concurrency,
      allowedHosts: doc.webhook_allowed_hosts ? doc.webhook_allowed_hosts.split(',') : [],
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
  const firebase = p.password_hashes.firebase_scrypt;
  return {
    id: p.id,
    domain: p.domain,
    publicOrigin: p.public_origin ?? `http://localhost:${port}`,
    claimsNamespace: p.claims_namespace,
    adminApi: { jwks: p.admin_api.jwks, algorithms: p.admin_api.algorithms },
    loginIdKeys: new Map(p.login_id_keys.map((k) => [k.key, { caseSensitive: k.case_sensitive }])),
    oauthProviders: new Map(p.oauth_providers.map((o) => [o.alias, o.type])),
    webhooks: p.webhooks.map((w) => ({ id: w.id, url: w.url, secret: w.secret, events: w.events })),
    customAttributes: new Map(
      p.custom_attributes.map((a) => [a.name, a.enum ? { type: a.type, enum: a.enum } : { type: a.type }]),
    ),
    limits: {
      ...(p.limits.import_pending_records ? { importPendingRecords: p.limits.import_pending_records } : {}),
      ...(p.limits.running_tasks ? { runningTasks: p.limits.running_tasks } : {}),
      ...(p.limits.export_max_concurrent ? { exportMaxConcurrent: p.limits.export_max_concurrent } : {}),
      ...(p.limits.export_rate_limit ? { exportRateLimit: p.limits.export_rate_limit } : {}),
      ...(p.limits.export_rate_limit_period_seconds
        ? { exportRateLimitPeriodSeconds: p.limits.export_rate_limit_period_seconds }
        : {}),
    },
    passwordHashes: {
      exportAllowed: p.password_hashes.export_allowed ?? false,
      firebaseScrypt: firebase && {
        signerKey: firebase.signer_key,
        saltSeparator: firebase.salt_separator,
        rounds: firebase.rounds,
        memCost: firebase.mem_cost,
      },
    },
  };
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
