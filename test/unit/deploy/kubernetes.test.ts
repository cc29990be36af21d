import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import { CONFIG_VARIABLES, loadConfig, requireDeploymentKeys } from '../../../pipeline/config.js';

/** A rendered manifest, as much of it as these checks read. */
interface Manifest {
  kind: string;
  metadata: { name: string };
  data?: Record<string, string>;
  spec?: Record<string, unknown> & {
    template?: { spec: PodSpec };
    selector?: { matchLabels?: Record<string, string> };
  };
}
interface PodSpec {
  terminationGracePeriodSeconds?: number;
  containers: Container[];
  volumes?: { name: string; secret?: { secretName: string } }[];
}
interface Container {
  name: string;
  image: string;
  command: string[];
  ports?: { name: string; containerPort: number }[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  envFrom?: { configMapRef?: { name: string } }[];
  readinessProbe?: { httpGet: { path: string; port: string | number } };
  livenessProbe?: { httpGet: { path: string; port: string | number } };
  lifecycle?: { preStop?: { sleep?: { seconds: number } } };
  resources?: { limits?: { memory?: string } };
}

/** Values a real Secret would hold, of the right shape, to read the rendered configuration with. */
const SECRET_VALUES: Record<string, string> = {
  DATABASE_URL: 'postgres://users:secret@postgres:5432/users',
  TASK_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
  AZURE_STORAGE_CONNECTION_STRING:
    'DefaultEndpointsProtocol=https;AccountName=users;AccountKey=a2V5;EndpointSuffix=core.windows.net',
  KAFKA_SASL_PASSWORD: 'a-scram-password',
};

/**
 * The Kubernetes manifests as `kubectl kustomize` renders the production overlay, offline: the
 * pinned image, the probes on each process's operator port, secrets only from the Secret, a
 * configuration each process accepts, grace periods that cover the drain, heaps under the memory
 * limits, the migration Job, disruption budgets and autoscaling.
 */
describe('kubernetes manifests', function () {
  this.timeout(30_000);
  const rendered = execFileSync('kubectl', ['kustomize', 'deploy/kubernetes/overlays/production'], {
    encoding: 'utf8',
  });
  const manifests = parseAllDocuments(rendered).map((d) => d.toJS() as Manifest);
  const find = (kind: string, name: string): Manifest => {
    const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
    if (!found) throw new Error(`no ${kind} ${name}`);
    return found;
  };
  const podOf = (kind: string, name: string): PodSpec => {
    const pod = find(kind, name).spec?.template?.spec;
    if (!pod) throw new Error(`${kind} ${name} has no pod template`);
    return pod;
  };
  const config = find('ConfigMap', 'users-service-config').data ?? {};
  // The project file the pods mount, written where this test can read it.
  const projectDir = mkdtempSync(path.join(tmpdir(), 'k8s-project-'));
  after(() => rmSync(projectDir, { recursive: true, force: true }));
  const projectFile = path.join(projectDir, 'project.json');
  writeFileSync(projectFile, find('ConfigMap', 'users-service-project').data?.['project.json'] ?? '');
  const workloads = [
    { kind: 'Deployment', name: 'users-service-api', role: 'api' as const, operatorPort: 3001 },
    { kind: 'Deployment', name: 'users-service-worker', role: 'worker' as const, operatorPort: 3100 },
    { kind: 'Job', name: 'users-service-migrate', role: undefined, operatorPort: undefined },
  ];
  /** The environment a container starts with: the ConfigMap, its literals, and the Secret's keys. */
  const environmentOf = (c: Container): Record<string, string> => {
    const env: Record<string, string> = {};
    if (c.envFrom?.some((f) => f.configMapRef?.name === 'users-service-config')) Object.assign(env, config);
    for (const e of c.env ?? []) {
      const key = e.valueFrom?.secretKeyRef?.key;
      env[e.name] = e.value ?? (key ? (SECRET_VALUES[key] ?? 'from-the-secret') : '');
    }
    if (env.PROJECT_CONFIG) env.PROJECT_CONFIG = projectFile;
    return env;
  };

  it('runs the pinned release image everywhere', () => {
    for (const { kind, name } of workloads)
      for (const c of podOf(kind, name).containers)
        expect(c.image, `${name}/${c.name}`).to.equal('ghcr.io/example/users-service:1.0.0');
  });

  it('takes every secret from the Secret, never as a literal, and sets only variables the service reads', () => {
    for (const { kind, name } of workloads) {
      for (const c of podOf(kind, name).containers) {
        for (const e of c.env ?? []) {
          if (/DATABASE_URL|KEY|PASSWORD|CONNECTION_STRING/.test(e.name))
            expect(e.valueFrom?.secretKeyRef?.name, `${name} ${e.name}`).to.equal('users-service-secrets');
          expect(
            [...CONFIG_VARIABLES, 'NODE_OPTIONS', 'GLIBC_TUNABLES'],
            `${name} sets ${e.name}`,
          ).to.include(e.name);
        }
      }
    }
    for (const variable of Object.keys(config)) expect(CONFIG_VARIABLES).to.include(variable);
    const volumes = podOf('Deployment', 'users-service-api').volumes ?? [];
    expect(volumes.find((v) => v.name === 'config')?.secret?.secretName).to.equal('users-service-secrets');
  });

  it('gives each process a configuration it starts with, outside the embedded default, without migrating', () => {
    for (const { kind, name, role } of workloads) {
      if (!role) continue;
      const [container] = podOf(kind, name).containers;
      if (!container) throw new Error(`${name} has no container`);
      const loaded = loadConfig(environmentOf(container));
      expect(() => requireDeploymentKeys(loaded, role), name).not.to.throw();
      expect(loaded.migrateOnStart, `${name} leaves migrations to the Job`).to.equal(false);
      // The project file is mounted: a domain and origin of its own, not the embedded default's.
      expect(loaded.project.domain, name).to.equal('admin.users.example.com');
      expect(loaded.project.publicOrigin, name).to.equal('https://admin.users.example.com');
      // Every secret the configuration asks for is given: SCRAM's password with its user.
      expect(loaded.kafkaSecurity.sasl, name).to.deep.equal({
        mechanism: 'scram-sha-512',
        username: 'users-service',
        password: SECRET_VALUES.KAFKA_SASL_PASSWORD,
      });
      expect(loaded.kafkaTopics).to.deep.equal({
        partitions: 12,
        replicationFactor: 3,
        minInsyncReplicas: 2,
      });
    }
    const [migrate] = podOf('Job', 'users-service-migrate').containers;
    expect(migrate?.command).to.deep.equal(['node', 'dist/pipeline/db/migrate-cli.js']);
  });

  it('probes each process on its operator port: ready on /readyz, alive on /healthz', () => {
    for (const { kind, name, operatorPort } of workloads) {
      if (!operatorPort) continue;
      const [c] = podOf(kind, name).containers;
      const port = c?.ports?.find((p) => p.name === c.readinessProbe?.httpGet.port)?.containerPort;
      expect(port, `${name} readiness port`).to.equal(operatorPort);
      expect(c?.readinessProbe?.httpGet.path).to.equal('/readyz');
      expect(c?.livenessProbe?.httpGet.path).to.equal('/healthz');
      expect(c?.livenessProbe?.httpGet.port).to.equal(c?.readinessProbe?.httpGet.port);
    }
  });

  it('grants a grace period that covers the drain, and heaps under the memory limits', () => {
    const drain = Number(config.SHUTDOWN_GRACE_SECONDS);
    expect(drain).to.be.above(0);
    for (const { kind, name } of workloads.filter((w) => w.role)) {
      const pod = podOf(kind, name);
      for (const c of pod.containers) {
        const preStop = c.lifecycle?.preStop?.sleep?.seconds ?? 0;
        expect(pod.terminationGracePeriodSeconds, name).to.be.at.least(drain + preStop + 5);
        const limitMi = Number(/^(\d+)Mi$/.exec(c.resources?.limits?.memory ?? '')?.[1]);
        const heapMb = Number(/--max-old-space-size=(\d+)/.exec(environmentOf(c).NODE_OPTIONS ?? '')?.[1]);
        expect(heapMb, `${name} heap`)
          .to.be.above(0)
          .and.at.most(limitMi * 0.8);
      }
    }
  });

  it('keeps pods through disruptions and scales the API on CPU, the workers on consumer lag up to the partitions', () => {
    for (const name of ['users-service-api', 'users-service-worker']) {
      const pdb = find('PodDisruptionBudget', name);
      const deployment = find('Deployment', name);
      expect(pdb.spec?.selector?.matchLabels).to.deep.equal(deployment.spec?.selector?.matchLabels);
    }
    const hpa = find('HorizontalPodAutoscaler', 'users-service-api').spec as {
      scaleTargetRef: { name: string };
      metrics: { resource: { name: string } }[];
    };
    expect(hpa.scaleTargetRef.name).to.equal('users-service-api');
    expect(hpa.metrics.map((m) => m.resource.name)).to.deep.equal(['cpu']);
    const scaled = find('ScaledObject', 'users-service-worker').spec as {
      scaleTargetRef: { name: string };
      maxReplicaCount: number;
      triggers: { type: string; metadata: { topic: string; consumerGroup: string } }[];
    };
    expect(scaled.scaleTargetRef.name).to.equal('users-service-worker');
    expect(scaled.maxReplicaCount).to.be.at.most(Number(config.KAFKA_PARTITIONS));
    const prefix = config.KAFKA_TOPIC_PREFIX;
    expect(scaled.triggers.map((t) => [t.type, t.metadata.topic, t.metadata.consumerGroup])).to.deep.equal([
      ['kafka', `${prefix}user-import`, `${prefix}user-import-workers`],
      ['kafka', `${prefix}user-export`, `${prefix}user-export-workers`],
    ]);
    // KEDA reads the lag as the workers read the topics: TLS and the same SCRAM user and password.
    const auth = find('TriggerAuthentication', 'users-service-kafka').spec as {
      configMapTargetRef: { parameter: string; name: string; key: string }[];
      secretTargetRef: { parameter: string; name: string; key: string }[];
    };
    expect(auth.configMapTargetRef).to.deep.equal([
      { parameter: 'username', name: 'users-service-config', key: 'KAFKA_SASL_USERNAME' },
    ]);
    expect(auth.secretTargetRef).to.deep.equal([
      { parameter: 'password', name: 'users-service-secrets', key: 'KAFKA_SASL_PASSWORD' },
    ]);
    for (const trigger of scaled.triggers as unknown as {
      metadata: Record<string, string>;
      authenticationRef: { name: string };
    }[]) {
      expect(trigger.authenticationRef).to.deep.equal({ name: 'users-service-kafka' });
      expect(trigger.metadata).to.deep.include({ sasl: 'scram_sha512', tls: 'enable' });
      expect(config.KAFKA_SASL_MECHANISM).to.equal('scram-sha-512');
      expect(config.KAFKA_SSL).to.equal('true');
    }
  });
});
