import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { parse, parseAllDocuments } from 'yaml';

/** A worker's container in the Kubernetes Deployment, as much of it as these checks read. */
interface WorkerContainer {
  command: string[];
  env: { name: string; value?: string }[];
}

/**
 * What can be checked of the files users deploy with, without a Docker engine: the image runs the
 * current Node.js LTS as the unprivileged user with a data folder it owns, probes the right port,
 * and compose keeps every dependency and operator port on the local machine, fails closed without a
 * shared secrets key, and migrates before the API and the workers start; the workers start with the
 * same V8 flags and allocator setting wherever they run.
 */
describe('deployment files', () => {
  const dockerfile = readFileSync('Dockerfile', 'utf8');

  it('the image: current Node.js LTS, non-root, a data folder the node user owns, a probe per process', () => {
    const bases = [...dockerfile.matchAll(/^FROM node:(\d+)-/gm)].map((m) => Number(m[1]));
    expect(bases).to.have.length(2);
    for (const major of bases) expect(major % 2 === 0 && major >= 26, `node:${major}`).to.equal(true);
    const runStage = dockerfile.slice(dockerfile.lastIndexOf('FROM '));
    const user = runStage.indexOf('USER node');
    const dataDir = runStage.search(/mkdir -p \/app\/\.data && chown node:node \/app\/\.data/);
    expect(dataDir, 'the data folder is made and given to node').to.be.above(0);
    expect(user, 'before the image drops to the node user').to.be.above(dataDir);
    expect(runStage).to.match(/^EXPOSE 3000 3001 3100$/m);
    const probe = /^HEALTHCHECK .*$/m.exec(runStage)?.[0] ?? '';
    expect(probe).to.include('API_OPERATOR_PORT').and.to.include('PIPELINE_HTTP_PORT');
  });

  it('one runtime: make runs the Node.js the image ships, pinned in package.json and named by engines', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
      engines: { node: string };
      devDependencies: Record<string, string>;
      allowScripts: Record<string, boolean>;
    };
    const pinned = pkg.devDependencies.node ?? '';
    expect(pinned, 'an exact version').to.match(/^\d+\.\d+\.\d+$/);
    const major = Number(pinned.split('.')[0]);
    const bases = [...dockerfile.matchAll(/^FROM node:(\d+)-/gm)].map((m) => Number(m[1]));
    expect(new Set(bases)).to.deep.equal(new Set([major]));
    expect(pkg.engines.node).to.equal(`>=${major}`);
    expect(pkg.allowScripts.node, 'its install script fetches the binary').to.equal(true);
    expect(readFileSync('Makefile', 'utf8')).to.match(
      /^export PATH := \$\(CURDIR\)\/node_modules\/\.bin:\$\(PATH\)$/m,
    );
  });

  it('compose: dependencies and operator ports on 127.0.0.1, no trusted proxy, a shared key, migrations first', () => {
    const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as {
      services: Record<
        string,
        {
          ports?: string[];
          environment?: Record<string, string>;
          depends_on?: Record<string, unknown>;
          stop_grace_period?: string;
        }
      >;
    };
    const { services } = compose;
    const publicPorts = Object.entries(services).flatMap(([name, s]) =>
      (s.ports ?? []).filter((p) => !p.startsWith('127.0.0.1:')).map((p) => `${name} ${p}`),
    );
    expect(publicPorts, 'only the API serves beyond this machine').to.deep.equal([
      'api 8080:3000',
      'api 8443:3443',
    ]);
    for (const name of ['api', 'worker', 'migrate']) {
      const env = services[name]?.environment ?? {};
      expect(env.TRUST_PROXY ?? 'false', name).to.equal('false');
      expect(env.TASK_SECRETS_KEY, name).to.match(/^\$\{TASK_SECRETS_KEY:\?/);
    }
    for (const name of ['api', 'worker']) {
      expect(services[name]?.depends_on?.migrate, name).to.deep.equal({
        condition: 'service_completed_successfully',
      });
      // Docker's default 10 s would cut the drain (SHUTDOWN_GRACE_SECONDS, 25 by default) short.
      const grace = Number(/^(\d+)s$/.exec(services[name]?.stop_grace_period ?? '')?.[1]);
      expect(grace, `${name} stop_grace_period`).to.be.above(25);
    }
  });

  it('the workers: the V8 flags NODE_OPTIONS cannot carry and the allocator setting, wherever they start', () => {
    const makefile = readFileSync('Makefile', 'utf8');
    const flags = /^PIPELINE_V8_FLAGS := (.+)$/m.exec(makefile)?.[1]?.split(' ') ?? [];
    expect(flags, 'allocation sites are not pretenured').to.include('--no-allocation-site-pretenuring');
    const tunables = /^PIPELINE_GLIBC_TUNABLES := (.+)$/m.exec(makefile)?.[1];
    expect(tunables, 'large allocations are mapped on their own').to.match(
      /^glibc\.malloc\.mmap_threshold=\d+$/,
    );
    const recipe = /^pipeline:.*\n((?:\t.*\n)+)/m.exec(makefile)?.[1] ?? '';
    expect(recipe).to.include('$(PIPELINE_V8_FLAGS)');
    expect(recipe).to.match(/^\tGLIBC_TUNABLES=\$\(PIPELINE_GLIBC_TUNABLES\) node /);
    expect(makefile, 'the bench starts its workers as make does')
      .to.include('PIPELINE_V8_FLAGS="$(PIPELINE_V8_FLAGS)"')
      .and.to.include('PIPELINE_GLIBC_TUNABLES=$(PIPELINE_GLIBC_TUNABLES)');
    const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as {
      services: Record<string, { command?: string[]; environment?: Record<string, string> }>;
    };
    const deployment = parseAllDocuments(readFileSync('deploy/kubernetes/base/worker.yaml', 'utf8'))
      .map(
        (d) => d.toJS() as { kind: string; spec: { template: { spec: { containers: WorkerContainer[] } } } },
      )
      .find((d) => d.kind === 'Deployment');
    const container = deployment?.spec.template.spec.containers[0];
    const starts = {
      compose: {
        command: compose.services.worker?.command ?? [],
        tunables: compose.services.worker?.environment?.GLIBC_TUNABLES,
      },
      kubernetes: {
        command: container?.command ?? [],
        tunables: container?.env.find((e) => e.name === 'GLIBC_TUNABLES')?.value,
      },
    };
    for (const [where, { command, tunables: set }] of Object.entries(starts)) {
      expect(command, where).to.include.members(flags);
      expect(command.at(-1), where).to.equal('dist/pipeline/main.js');
      expect(set, `${where} GLIBC_TUNABLES`).to.equal(tunables);
    }
  });
});
