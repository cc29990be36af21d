/**
 * The service's configuration: environment variables mapped to snake_case keys, with the project
 * section read from the JSON file named by PROJECT_CONFIG. Defaults here are the documented ones.
 */
/** Standard base64, padded, not empty. */
const base64 = {
  type: 'string',
  minLength: 4,
  pattern: '^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$',
} as const;

/** Tasks of one kind a worker process runs at once, unless WORKER_CONCURRENCY says otherwise. */
const DEFAULT_WORKER_CONCURRENCY = 2;

export const configSchema = {
  $id: 'config',
  type: 'object',
  additionalProperties: false,
  required: [
    'port',
    'data_dir',
    'embedded_postgres_port',
    'trust_proxy',
    'log_level',
    'kafka_topic_prefix',
    'project',
  ],
  dependentRequired: {
    azure_storage_account_name: ['azure_storage_account_key'],
    azure_storage_account_key: ['azure_storage_account_name'],
    tls_cert_file: ['tls_key_file'],
    tls_key_file: ['tls_cert_file'],
    // The search index is fed through the `user-changes` topic.
    clickhouse_url: ['kafka_brokers'],
    // A standby of the configured database; the embedded one has none.
    database_read_url: ['database_url'],
  },
  properties: {
    port: { type: 'integer', minimum: 1, maximum: 65535, default: 3000 },
    database_url: { type: 'string', minLength: 1 },
    // A hot standby of DATABASE_URL that exports read once it has replayed past their request.
    database_read_url: { type: 'string', minLength: 1 },
    data_dir: { type: 'string', minLength: 1, default: '.data' },
    embedded_postgres_port: { type: 'integer', minimum: 1, maximum: 65535, default: 5433 },
    trust_proxy: { type: 'boolean', default: false },
    // HTTPS beside plain HTTP: on this port, with TLS_CERT_FILE/TLS_KEY_FILE (PEM), or on the
    // embedded default with a self-signed localhost certificate made in the data folder.
    https_port: { type: 'integer', minimum: 1, maximum: 65535, default: 3443 },
    tls_cert_file: { type: 'string', minLength: 1 },
    tls_key_file: { type: 'string', minLength: 1 },
    log_level: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
    admin_jwks_file: { type: 'string', minLength: 1 },
    // Outside the embedded default, a process refuses to start without configured keys, unless
    // this says that keys made in the data folder are wanted (a developer's machine, the tests).
    development_keys: { type: 'boolean', default: false },
    // Comma-separated host:port list; when set, task messages go through Kafka.
    kafka_brokers: { type: 'string', pattern: '^[^,\\s]+(,[^,\\s]+)*$' },
    kafka_topic_prefix: { type: 'string', pattern: '^[a-zA-Z0-9._-]*$', default: '' },
    // How the service's topics are made, when it makes them (an existing topic is left as it is):
    // defaults for a cluster of three brokers or more.
    kafka_partitions: { type: 'integer', minimum: 1, maximum: 10000, default: 12 },
    kafka_replication_factor: { type: 'integer', minimum: 1, maximum: 32, default: 3 },
    kafka_min_insync_replicas: { type: 'integer', minimum: 1, maximum: 32, default: 2 },
    // How soon a dead worker's partitions go to another (the broker allows 6000 at the least).
    // The message handler only claims its task, so a short session never expels a busy worker.
    kafka_session_timeout_ms: { type: 'integer', minimum: 6000, default: 10000 },
    // TLS to the brokers: on, with a CA bundle and a client certificate and key (PEM files) when
    // the cluster needs them.
    kafka_ssl: { type: 'boolean', default: false },
    kafka_ssl_ca_file: { type: 'string', minLength: 1 },
    kafka_ssl_cert_file: { type: 'string', minLength: 1 },
    kafka_ssl_key_file: { type: 'string', minLength: 1 },
    // SASL authentication (Confluent Cloud, MSK with SCRAM, Event Hubs use PLAIN over TLS).
    kafka_sasl_mechanism: { enum: ['plain', 'scram-sha-256', 'scram-sha-512'] },
    kafka_sasl_username: { type: 'string', minLength: 1 },
    kafka_sasl_password: { type: 'string', minLength: 1 },
    task_retention_seconds: { type: 'integer', minimum: 1, default: 86400 },
    // How long the import log (the import topic, or the embedded queue) keeps each request: the
    // reach of a replay (7 days).
    import_log_retention_seconds: { type: 'integer', minimum: 60, default: 604800 },
    // The change feed (docs/changes.md): how long an event is kept (7 days)...
    changes_retention_seconds: { type: 'integer', minimum: 60, default: 604800 },
    // ... and whether the workers publish it to the `<prefix>user-events` topic (Kafka only).
    changes_kafka_topic: { type: 'boolean', default: false },
    // File imports (docs/file-imports.md): how long an upload URL may be written to (a day); the
    // largest file an import takes (100 GiB); how long the sealed copy of an imported file is kept
    // for a replay (7 days).
    import_upload_seconds: { type: 'integer', minimum: 60, maximum: 604800, default: 86400 },
    import_file_max_bytes: { type: 'integer', minimum: 1, default: 107374182400 },
    import_file_retention_seconds: { type: 'integer', minimum: 60, default: 604800 },
    // A file larger than this (as uploaded) is split into parts applied by several workers at once,
    // at most this many (docs/file-imports.md, Many workers on one file).
    import_file_part_bytes: { type: 'integer', minimum: 1, default: 268435456 },
    import_file_parts_max: { type: 'integer', minimum: 1, maximum: 256, default: 16 },
    // Uploads a project may hold open at once (made, unexpired, named by no import yet).
    import_uploads_open_limit: { type: 'integer', minimum: 1, default: 100 },
    // A worker's claim on a task lasts this long unless renewed (it renews twice a second); a
    // worker that died is noticed this long after its last renewal, and its task offered again.
    task_lease_seconds: { type: 'integer', minimum: 2, maximum: 600, default: 6 },
    // A task whose lease lapsed this many times (its workers keep dying on it) ends TaskExpired.
    // A task waiting on the bus never expires.
    task_max_lapses: { type: 'integer', minimum: 1, maximum: 100, default: 5 },
    // An attempt whose work made no progress this long (an I/O that never settled) gives up its
    // lease for another worker, even though its process is alive and renewing; counted as a lapse.
    task_stall_seconds: { type: 'integer', minimum: 5, maximum: 86_400, default: 300 },
    // How long a stopping process (SIGTERM) waits for its tasks to reach a point where another
    // worker can go on (the batch at hand) before it exits 1; a pod's grace period must cover it.
    shutdown_grace_seconds: { type: 'integer', minimum: 1, maximum: 3600, default: 25 },
    // An export running longer than this ends TaskTimedOut (2 hours).
    export_time_limit_seconds: { type: 'integer', minimum: 1, default: 7200 },
    // How long a task retries through transient faults (a dependency down) before it fails.
    task_retry_seconds: { type: 'integer', minimum: 0, default: 300 },
    // AES-256 key (32 bytes, base64) sealing the secrets of stored import requests; previous keys
    // (comma-separated) still open what they sealed. Unset: a key kept in the data folder.
    task_secrets_key: { type: 'string', pattern: '^[A-Za-z0-9+/]{43}=$' },
    task_secrets_previous_keys: { type: 'string', pattern: '^[A-Za-z0-9+/]{43}=(,[A-Za-z0-9+/]{43}=)*$' },
    // Back-pressure: records of pending imports past which a new import answers 429 TooManyRequest.
    import_pending_records_limit: { type: 'integer', minimum: 1, default: 500000 },
    // Tasks of each kind one project runs at once across the deployment; 0: no bound (claiming
    // stays fair across projects either way).
    project_running_tasks_limit: { type: 'integer', minimum: 0, default: 0 },
    // The worker process's /healthz, /readyz and /metrics (`make pipeline`); 0: not served.
    pipeline_http_port: { type: 'integer', minimum: 0, maximum: 65535, default: 3100 },
    // The API process's /healthz, /readyz and /metrics, apart from the public port; 0: not served.
    api_operator_port: { type: 'integer', minimum: 0, maximum: 65535, default: 3001 },
    // users(searchKeyword) on ClickHouse (HTTP interface) in this database; unset: on Postgres.
    clickhouse_url: { type: 'string', pattern: '^https?://[^\\s]+$' },
    clickhouse_database: {
      type: 'string',
      pattern: '^[a-zA-Z_][a-zA-Z0-9_]{0,62}$',
      default: 'users_service',
    },
    import_batch_size: { type: 'integer', minimum: 1, maximum: 10000, default: 2000 },
    // Postgres's statement_timeout on the connections that serve admin requests (lookups, GraphQL,
    // status reads); the workers' connections have none.
    request_statement_timeout_ms: { type: 'integer', minimum: 100, maximum: 600000, default: 15000 },
    // A service process applies the migrations at start: always on the embedded default, elsewhere
    // only when this says so (a deployment runs `make migrate`, a Job, once per release).
    migrate_on_start: { type: 'boolean', default: false },
    // TCP keepalive on every Postgres connection, after this long idle (0: off): a server or a
    // network path that vanished without a reset is noticed in about a minute, not two hours.
    database_keepalive_seconds: { type: 'integer', minimum: 0, maximum: 3600, default: 30 },
    // On every worker and upkeep connection: a statement waiting this long for a lock gives up (and
    // is retried) rather than queueing behind a transaction of a host that vanished (0: off).
    database_lock_timeout_ms: { type: 'integer', minimum: 0, maximum: 3600000, default: 30000 },
    // A session idle inside a transaction this long is ended by Postgres, and its locks with it.
    database_idle_in_transaction_timeout_ms: {
      type: 'integer',
      minimum: 0,
      maximum: 3600000,
      default: 60000,
    },
    // statement_timeout of worker and upkeep statements; the export's COPY and a dry run, long by
    // design, lift it for themselves (0: off).
    database_statement_timeout_ms: { type: 'integer', minimum: 0, maximum: 3600000, default: 300000 },
    // Tasks one worker process runs at once (per task kind).
    worker_concurrency: { type: 'integer', minimum: 1, maximum: 64, default: DEFAULT_WORKER_CONCURRENCY },
    // How far a process's old generation may grow past what its last full collection kept (V8's
    // heap growing percent) while it runs an import; the rest of the time V8 chooses (0: always).
    import_heap_growing_percent: { type: 'integer', minimum: 0, maximum: 1000, default: 60 },
    // Export: switched off here, or when no blob storage is configured (and none is embedded).
    export_enabled: { type: 'boolean', default: true },
    // Azure Blob Storage: a connection string with an AccountKey (SAS URLs are signed with it)...
    azure_storage_connection_string: { type: 'string', pattern: 'AccountKey=' },
    // ...or an account name and key (endpoint https://<name>.blob.core.windows.net).
    azure_storage_account_name: { type: 'string', pattern: '^[a-z0-9]{3,24}$' },
    azure_storage_account_key: { type: 'string', minLength: 1 },
    azure_storage_container: {
      type: 'string',
      pattern: '^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){2,62}$',
      default: 'user-exports',
    },
    // Port of the Azurite the embedded default starts (only without DATABASE_URL and blob settings).
    embedded_azurite_port: { type: 'integer', minimum: 1, maximum: 65535, default: 10000 },
    export_download_url_seconds: { type: 'integer', minimum: 1, maximum: 86400, default: 60 },
    export_max_concurrent: { type: 'integer', minimum: 1, maximum: 100, default: 1 },
    // An export of more users than this is split into parts of this many users, which the
    // workers of the consumer group write side by side into one file; 0 never splits.
    export_part_users: { type: 'integer', minimum: 0, default: 1_000_000 },
    // Export readers at once in the whole deployment (a one-part export's coordinator, a part being
    // written); an export waits for one before its snapshot, so exports cannot take every
    // connection and core from lookups.
    export_readers_max: { type: 'integer', minimum: 1, default: 8 },
    // How long an export waits for the standby to replay past its request before it reads the
    // primary instead.
    export_standby_wait_seconds: { type: 'integer', minimum: 0, default: 60 },
    // The UserExport token bucket: this many exports per period, refilled evenly.
    export_rate_limit: { type: 'integer', minimum: 1, default: 24 },
    export_rate_limit_period_seconds: { type: 'integer', minimum: 1, default: 86400 },
    // Webhook deliveries (docs/webhooks.md): how long an endpoint may take to answer, the wait
    // before the second attempt (doubled for each attempt after it, up to the longest wait), and
    // how long after its event a delivery is given up.
    webhook_timeout_ms: { type: 'integer', minimum: 100, maximum: 60_000, default: 10_000 },
    webhook_retry_first_ms: { type: 'integer', minimum: 10, maximum: 3_600_000, default: 10_000 },
    webhook_retry_max_ms: { type: 'integer', minimum: 10, maximum: 86_400_000, default: 3_600_000 },
    webhook_give_up_seconds: { type: 'integer', minimum: 1, maximum: 604_800, default: 86_400 },
    // Deliveries one worker process has in flight at once.
    webhook_concurrency: { type: 'integer', minimum: 1, maximum: 64, default: 4 },
    // Hosts and CIDRs deliveries may reach besides the public internet, over http:// too for a
    // listed host (tests and development receivers), comma-separated.
    webhook_allowed_hosts: { type: 'string', pattern: '^[^,\\s]+(,[^,\\s]+)*$' },
    project: { $ref: 'config#/$defs/project' },
  },
  $defs: {
    project: {
      type: 'object',
      additionalProperties: false,
      required: [
        'id',
        'domain',
        'claims_namespace',
        'admin_api',
        'login_id_keys',
        'oauth_providers',
        'custom_attributes',
        'password_hashes',
      ],
      properties: {
        id: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,62}$', default: 'default' },
        domain: { type: 'string', minLength: 1, default: 'localhost' },
        public_origin: { type: 'string', pattern: '^https?://[^/]+$' },
        claims_namespace: { type: 'string', minLength: 1, default: 'https://authgear.com/claims' },
        admin_api: {
          type: 'object',
          additionalProperties: false,
          required: ['algorithms'],
          default: {},
          properties: {
            jwks: {
              type: 'object',
              required: ['keys'],
              properties: {
                keys: {
                  type: 'array',
                  minItems: 1,
                  items: { type: 'object', required: ['kty'], properties: { kty: { type: 'string' } } },
                },
              },
            },
            algorithms: {
              type: 'array',
              minItems: 1,
              uniqueItems: true,
              // Asymmetric only: a shared-secret or unsigned token is never an admin token.
              items: {
                enum: [
                  'RS256',
                  'RS384',
                  'RS512',
                  'PS256',
                  'PS384',
                  'PS512',
                  'ES256',
                  'ES384',
                  'ES512',
                  'EdDSA',
                ],
              },
              default: [
                'RS256',
                'RS384',
                'RS512',
                'PS256',
                'PS384',
                'PS512',
                'ES256',
                'ES384',
                'ES512',
                'EdDSA',
              ],
            },
          },
        },
        login_id_keys: {
          type: 'array',
          uniqueItems: true,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['key', 'case_sensitive'],
            properties: {
              key: { enum: ['email', 'username', 'phone'] },
              case_sensitive: { type: 'boolean', default: false },
            },
          },
          default: [
            { key: 'email', case_sensitive: false },
            { key: 'username', case_sensitive: false },
            { key: 'phone', case_sensitive: false },
          ],
        },
        oauth_providers: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['alias', 'type'],
            properties: {
              alias: { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,64}$' },
              type: { type: 'string', minLength: 1 },
            },
          },
          default: [
            { alias: 'google', type: 'google' },
            { alias: 'facebook', type: 'facebook' },
            { alias: 'github', type: 'github' },
            { alias: 'apple', type: 'apple' },
          ],
        },
        // Password hashes: the parameters of formats whose hashes do not carry them, and whether
        // an export may write the stored hashes (`include_password_hashes`).
        password_hashes: {
          type: 'object',
          additionalProperties: false,
          default: {},
          properties: {
            export_allowed: { type: 'boolean', default: false },
            // Firebase console, Authentication, "Password hash parameters".
            firebase_scrypt: {
              type: 'object',
              additionalProperties: false,
              required: ['signer_key', 'salt_separator', 'rounds', 'mem_cost'],
              properties: {
                signer_key: base64,
                salt_separator: base64,
                rounds: { type: 'integer', minimum: 1, maximum: 64 },
                mem_cost: { type: 'integer', minimum: 1, maximum: 24 },
              },
            },
          },
        },
        // The project's own limits over the deployment's (docs/running-many-projects.md).
        limits: {
          type: 'object',
          additionalProperties: false,
          default: {},
          properties: {
            import_pending_records: { type: 'integer', minimum: 1 },
            running_tasks: { type: 'integer', minimum: 1 },
            export_max_concurrent: { type: 'integer', minimum: 1, maximum: 100 },
            export_rate_limit: { type: 'integer', minimum: 1 },
            export_rate_limit_period_seconds: { type: 'integer', minimum: 1 },
          },
        },
        // The endpoints told of task events (user_import.completed, user_export.completed) and of
        // the change feed's (user.created, user.updated, user.deleted).
        webhooks: {
          type: 'array',
          default: [],
          maxItems: 20,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['id', 'url', 'secret', 'events'],
            properties: {
              id: { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,64}$' },
              url: { type: 'string', pattern: '^https?://[^\\s]+$', maxLength: 2048 },
              // The key of each body's HMAC-SHA256 (x-authgear-body-signature).
              secret: { type: 'string', minLength: 16, maxLength: 256 },
              events: {
                type: 'array',
                minItems: 1,
                uniqueItems: true,
                items: {
                  enum: [
                    'user_import.completed',
                    'user_export.completed',
                    'user.created',
                    'user.updated',
                    'user.deleted',
                  ],
                },
              },
            },
          },
        },
        custom_attributes: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['name', 'type'],
            properties: {
              name: { type: 'string', pattern: '^[a-zA-Z_][a-zA-Z0-9_]{0,63}$' },
              type: {
                enum: [
                  'string',
                  'number',
                  'integer',
                  'boolean',
                  'enum',
                  'email',
                  'phone_number',
                  'url',
                  'country_code',
                ],
              },
              enum: { type: 'array', items: { type: 'string' }, minItems: 1 },
            },
          },
          default: [],
        },
      },
    },
  },
} as const;
