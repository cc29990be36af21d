import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { configFromDocument, loadConfig } from '../../../pipeline/config.js';
import { ConfigError } from '../../../pipeline/errors.js';

describe('config', () => {
  it('applies the documented defaults to an empty environment', () => {
    const config = loadConfig({});
    expect(config.port).to.equal(3000);
    expect(config.databaseUrl).to.equal(undefined);
    expect(config.embeddedPostgresPort).to.equal(5433);
    expect(config.trustProxy).to.equal(false);
    expect(config.logLevel).to.equal('info');
    expect(path.basename(config.dataDir)).to.equal('.data');
    expect(config.project.id).to.equal('default');
    expect(config.project.domain).to.equal('localhost');
    expect(config.project.publicOrigin).to.equal('http://localhost:3000');
    expect(config.project.claimsNamespace).to.equal('https://authgear.com/claims');
    expect([...config.project.loginIdKeys]).to.deep.equal([
      ['email', { caseSensitive: false }],
      ['username', { caseSensitive: false }],
      ['phone', { caseSensitive: false }],
    ]);
    expect([...config.project.oauthProviders.keys()]).to.deep.equal([
      'google',
      'facebook',
      'github',
      'apple',
    ]);
    expect(config.project.adminApi.algorithms).to.include('RS256').and.not.include('HS256');
    expect(config.project.customAttributes.size).to.equal(0);
    expect(config.kafkaBrokers).to.deep.equal([]);
    expect(config.kafkaTopicPrefix).to.equal('');
    expect(config.kafkaSessionTimeoutMs).to.equal(10000);
    expect(config.kafkaSecurity).to.deep.equal({});
    expect(config.workerConcurrency).to.equal(2);
    expect(config.importBatchSize).to.equal(2000);
    expect(config.taskRetentionSeconds).to.equal(86400);
    expect(config.taskLeaseSeconds).to.equal(6);
    expect(config.taskMaxLapses).to.equal(5);
    expect(config.shutdownGraceSeconds).to.equal(25);
    expect(config.databaseTimeouts).to.deep.equal({
      lockMs: 30000,
      idleInTransactionMs: 60000,
      statementMs: 300000,
    });
  });

  it('reads TLS and SASL to the brokers, and refuses half of either', () => {
    const prod = { KAFKA_BROKERS: 'a:9093', KAFKA_TOPIC_PREFIX: 'prod.' };
    expect(loadConfig({ ...prod, KAFKA_SSL: 'true' }).kafkaSecurity).to.deep.equal({ ssl: {} });
    expect(
      loadConfig({
        ...prod,
        KAFKA_SSL_CA_FILE: '/ca.pem',
        KAFKA_SASL_MECHANISM: 'scram-sha-512',
        KAFKA_SASL_USERNAME: 'users',
        KAFKA_SASL_PASSWORD: 'secret',
      }).kafkaSecurity,
      'a CA file implies TLS',
    ).to.deep.equal({
      ssl: { caFile: '/ca.pem' },
      sasl: { mechanism: 'scram-sha-512', username: 'users', password: 'secret' },
    });
    expect(() => loadConfig({ ...prod, KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u' })).to.throw(
      ConfigError,
      'KAFKA_SASL_MECHANISM needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD',
    );
    expect(() => loadConfig({ ...prod, KAFKA_SSL_CERT_FILE: '/client.pem' })).to.throw(
      ConfigError,
      'KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE must be set together',
    );
    expect(() => loadConfig({ ...prod, KAFKA_SASL_MECHANISM: 'gssapi' })).to.throw(
      ConfigError,
      'KAFKA_SASL_MECHANISM must be one of plain, scram-sha-256, scram-sha-512',
    );
  });

  it('reads the Kafka brokers as a list', () => {
    const brokers = loadConfig({ KAFKA_BROKERS: 'a:9092,b:9092', KAFKA_TOPIC_PREFIX: 'prod.' }).kafkaBrokers;
    expect(brokers).to.deep.equal(['a:9092', 'b:9092']);
    const prod = loadConfig({ KAFKA_BROKERS: 'a:9092', KAFKA_TOPIC_PREFIX: 'prod.' }).kafkaTopics;
    expect(prod, 'defaults for three brokers').to.deep.equal({
      partitions: 12,
      replicationFactor: 3,
      minInsyncReplicas: 2,
    });
    expect(() =>
      loadConfig({ KAFKA_BROKERS: 'a:9092', KAFKA_TOPIC_PREFIX: 'p.', KAFKA_REPLICATION_FACTOR: '1' }),
    ).to.throw(ConfigError, 'KAFKA_MIN_INSYNC_REPLICAS must not be more than KAFKA_REPLICATION_FACTOR');
    expect(() => loadConfig({ KAFKA_BROKERS: 'a:9092' })).to.throw(
      ConfigError,
      'KAFKA_TOPIC_PREFIX must be set with KAFKA_BROKERS (one prefix per deployment)',
    );
    expect(() => loadConfig({ KAFKA_BROKERS: 'a:9092,,b', KAFKA_TOPIC_PREFIX: 'prod.' })).to.throw(
      ConfigError,
      /KAFKA_BROKERS has an invalid format/,
    );
    expect(() => loadConfig({ KAFKA_SESSION_TIMEOUT_MS: '1000' })).to.throw(
      ConfigError,
      /KAFKA_SESSION_TIMEOUT_MS must be an integer of at least 6000/,
    );
  });

  it('reads the environment and the project file', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'config-'));
    const file = path.join(dir, 'project.json');
    writeFileSync(
      file,
      JSON.stringify({
        id: 'acme',
        domain: 'auth.acme.test',
        public_origin: 'https://auth.acme.test',
        login_id_keys: [{ key: 'email', case_sensitive: true }],
        custom_attributes: [{ name: 'tier', type: 'enum', enum: ['gold', 'silver'] }],
      }),
    );
    const config = loadConfig({
      PORT: '8080',
      TRUST_PROXY: 'true',
      DATABASE_URL: 'postgres://x/y',
      PROJECT_CONFIG: file,
    });
    expect(config.port).to.equal(8080);
    expect(config.trustProxy).to.equal(true);
    expect(config.databaseUrl).to.equal('postgres://x/y');
    expect(config.project.publicOrigin).to.equal('https://auth.acme.test');
    expect(config.project.loginIdKeys.get('email')).to.deep.equal({ caseSensitive: true });
    expect(config.project.loginIdKeys.has('phone')).to.equal(false);
    expect(config.project.customAttributes.get('tier')).to.deep.equal({
      type: 'enum',
      enum: ['gold', 'silver'],
    });
  });

  it('refuses invalid settings, naming each', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).to.throw(
      ConfigError,
      'invalid configuration: PORT must be an integer from 1 to 65535',
    );
    expect(() => loadConfig({ PORT: '0' })).to.throw(ConfigError, /PORT must be an integer from 1 to 65535/);
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).to.throw(
      ConfigError,
      /LOG_LEVEL must be one of fatal, error/,
    );
    expect(() => loadConfig({ TRUST_PROXY: 'maybe' })).to.throw(
      ConfigError,
      /TRUST_PROXY must be true, false, 1 or 0/,
    );
    expect(() => configFromDocument({ project: { login_id_keys: [{ key: 'nickname' }] } })).to.throw(
      ConfigError,
      /login_id_keys/,
    );
    expect(() => configFromDocument({ project: { admin_api: { algorithms: ['HS256'] } } })).to.throw(
      ConfigError,
    );
    expect(() => configFromDocument({ project: { surprise: true } })).to.throw(ConfigError, /additional/);
    expect(() => loadConfig({ PROJECT_CONFIG: '/nonexistent/project.json' })).to.throw(
      ConfigError,
      /PROJECT_CONFIG/,
    );
  });

  it('takes 1 and 0 for a boolean, as docs/decisions.md writes TRUST_PROXY', () => {
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).to.equal(true);
    expect(loadConfig({ TRUST_PROXY: '0' }).trustProxy).to.equal(false);
    expect(loadConfig({ TRUST_PROXY: 'TRUE' }).trustProxy).to.equal(true);
    expect(loadConfig({ EXPORT_ENABLED: '0' }).export.enabled).to.equal(false);
  });

  it('is frozen', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).to.equal(true);
    expect(Object.isFrozen(config.project)).to.equal(true);
    expect(Object.isFrozen(config.project.adminApi.algorithms)).to.equal(true);
  });
});
