import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { expect } from 'chai';
import { buildClientSchema, getIntrospectionQuery, type IntrospectionQuery, printSchema } from 'graphql';
import { errorCatalogueMarkdown } from '../../../schemas/error-catalogue-doc.js';
import { ERROR_REASONS } from '../../../schemas/error-reasons.js';
import { openApiDocument } from '../../../schemas/openapi.js';
import { adminClient, makeTestKeys, type TestKeys, testApp, testConfig } from '../../support/admin-api.js';
import { useTestSchema } from '../../support/database.js';

/** Koa's middleware made by @koa/router carries its router. */
interface RouterMiddleware {
  router?: { stack: { path: string; methods: string[] }[] };
}

describe('contracts: the OpenAPI document and the GraphQL SDL, checked in and served', () => {
  const db = useTestSchema();
  let keys: TestKeys;
  before(async () => {
    keys = await makeTestKeys();
  });
  const client = () => adminClient(testConfig(keys), db, keys);

  it('serves the checked-in OpenAPI document, valid OpenAPI 3.1', async () => {
    const checkedIn = JSON.parse(readFileSync('schemas/openapi.json', 'utf8'));
    expect(checkedIn, 'schemas/openapi.json is stale: npm run contracts').to.deep.equal(
      JSON.parse(JSON.stringify(openApiDocument)),
    );
    const res = await client().request({ method: 'GET', url: '/_api/admin/openapi.json' });
    expect(res.statusCode).to.equal(200);
    expect(JSON.parse(res.body)).to.deep.equal(checkedIn);
    const validator = new Validator();
    const result = await validator.validate(checkedIn);
    expect(result.errors ?? [], JSON.stringify(result.errors)).to.deep.equal([]);
    expect(result.valid).to.equal(true);
    expect(validator.version).to.equal('3.1');
  });

  it('documents every reason of the error catalogue, in the OpenAPI document and docs/errors.md', () => {
    expect(readFileSync('docs/errors.md', 'utf8'), 'docs/errors.md is stale: npm run contracts').to.equal(
      errorCatalogueMarkdown(),
    );
    const reasons = openApiDocument.components.schemas.Error.properties.reason.enum;
    expect(reasons).to.deep.equal(Object.keys(ERROR_REASONS));
    for (const reason of reasons)
      expect(readFileSync('docs/errors.md', 'utf8')).to.include(`| \`${reason}\` |`);
  });

  it('holds every route the service serves, with its methods', () => {
    const app = testApp(testConfig(keys), db(), keys);
    const routes = (app.middleware as RouterMiddleware[]).flatMap((m) => m.router?.stack ?? []);
    const served = new Set<string>();
    for (const route of routes) {
      const path = route.path.replace(/:(\w+)/g, '{$1}');
      for (const method of route.methods)
        if (method !== 'HEAD') served.add(`${method.toLowerCase()} ${path}`);
    }
    const documented = new Set(
      Object.entries(openApiDocument.paths).flatMap(([path, ops]) =>
        Object.keys(ops).map((m) => `${m} ${path}`),
      ),
    );
    // router.all() serves every method; the document names the two GraphQL over HTTP uses.
    const graphql = [...served].filter((r) => r.endsWith(' /_api/admin/graphql'));
    for (const r of graphql) if (!['get', 'post'].includes(r.split(' ')[0] ?? '')) served.delete(r);
    expect([...served].sort()).to.deep.equal([...documented].sort());
  });

  it('serves the checked-in GraphQL SDL', async () => {
    const checkedIn = readFileSync('schemas/admin.graphql', 'utf8');
    const res = await client().graphql(getIntrospectionQuery({ schemaDescription: true }));
    expect(res.errors).to.equal(undefined);
    const served = printSchema(buildClientSchema(res.data as unknown as IntrospectionQuery));
    expect(`${served}\n`, 'schemas/admin.graphql is stale: npm run contracts').to.equal(checkedIn);
  });
});
