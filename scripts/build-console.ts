// Builds the web console (console/) into dist/console: one bundle of its TypeScript, its
// stylesheet and its page. `npm run build`, `make start` and `make test` run it.

import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { _, Ajv2020 } from 'ajv/dist/2020.js';
import standaloneCode from 'ajv/dist/standalone/index.js';
import { build } from 'esbuild';
import { contractFormats } from '../schemas/date-time.js';
import { importRequestSchema } from '../schemas/import-request.schema.js';
import { CONTRACT_AJV_OPTIONS, importRecordSchemaFor } from '../schemas/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The import record validators as code (Ajv's standalone output), one per identifier: the page's
 * Content-Security-Policy forbids the eval Ajv compiles with at run time.
 */
function recordValidatorsCode(): string {
  const ajv = new Ajv2020({
    ...CONTRACT_AJV_OPTIONS,
    // The generated code takes the date-time check from the module the service's validator uses.
    code: { source: true, esm: true, formats: _`require("contract-formats").contractFormats` },
  });
  ajv.addFormat('date-time', contractFormats['date-time']);
  const names: Record<string, string> = {};
  for (const identifier of importRequestSchema.properties.identifier.enum) {
    const schema = importRecordSchemaFor(identifier);
    ajv.addSchema(schema);
    names[identifier] = schema.$id;
  }
  return standaloneCode.default(ajv, names);
}

export async function buildConsole(out = path.join(root, 'dist', 'console')): Promise<string> {
  const source = path.join(root, 'console');
  await mkdir(out, { recursive: true });
  const generated = await mkdtemp(path.join(tmpdir(), 'console-build-'));
  const validators = path.join(generated, 'record-validators.js');
  await writeFile(validators, recordValidatorsCode());
  await build({
    plugins: [
      {
        name: 'record-validators',
        setup: (b) => {
          b.onResolve({ filter: /^record-validators$/ }, () => ({ path: validators }));
          b.onResolve({ filter: /^contract-formats$/ }, () => ({
            path: path.join(root, 'schemas', 'date-time.ts'),
          }));
        },
      },
    ],
    nodePaths: [path.join(root, 'node_modules')],
    entryPoints: [path.join(source, 'main.ts')],
    inject: [path.join(source, 'buffer-shim.ts')],
    outfile: path.join(out, 'console.js'),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'warning',
  }).finally(() => rm(generated, { recursive: true, force: true }));
  await copyFile(path.join(source, 'console.css'), path.join(out, 'console.css'));
  await copyFile(path.join(source, 'index.html'), path.join(out, 'index.html'));
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.stdout.write(`console built in ${await buildConsole()}\n`);
}
