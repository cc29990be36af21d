import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { hashSync } from 'bcrypt-ts';
import { expect } from 'chai';

const run = promisify(execFile);

interface EntryPoint {
  readonly types: string;
  readonly source: string;
  readonly default: string;
}

describe('the package entry point: verifyPassword for the login service', () => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
    name: string;
    exports: { '.': EntryPoint };
  };

  it('points at the built form of the module it names as its source', () => {
    const entry = pkg.exports['.'];
    const built = entry.source.replace(/^\.\//, './dist/').replace(/\.ts$/, '.js');
    expect(entry.default).to.equal(built);
    expect(entry.types).to.equal(built.replace(/\.js$/, '.d.ts'));
    const build = JSON.parse(readFileSync('tsconfig.build.json', 'utf8')) as {
      compilerOptions: { outDir: string; declaration?: boolean };
      include: string[];
    };
    expect(build.compilerOptions).to.include({ outDir: 'dist', declaration: true });
    expect(build.include).to.include(entry.source.split('/')[1]);
  });

  it('answers an import of the package by name: true for the password, false for another', async function () {
    this.timeout(20_000);
    const stored = hashSync('correct horse', 4);
    const script = `import { verifyPassword } from ${JSON.stringify(pkg.name)};
      const [right, wrong] = await Promise.all([
        verifyPassword(process.env.STORED, 'correct horse'),
        verifyPassword(process.env.STORED, 'battery staple'),
      ]);
      process.stdout.write(JSON.stringify({ right, wrong }));`;
    // The source condition resolves the entry point to its TypeScript source, as the build would
    // resolve it to dist/.
    const { stdout } = await run(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', '--input-type=module', '-e', script],
      { env: { ...process.env, STORED: stored } },
    );
    expect(JSON.parse(stdout)).to.deep.equal({ right: true, wrong: false });
  });
});
