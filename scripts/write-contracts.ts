// `npm run contracts`: writes the checked-in contracts the service serves or documents:
// schemas/openapi.json (built from the JSON Schemas), schemas/admin.graphql (the GraphQL schema's
// SDL) and docs/errors.md (the error catalogue). A test fails when one differs from its source.
import { writeFileSync } from 'node:fs';
import { printSchema } from 'graphql';
import { adminSchema } from '../api/graphql/schema.js';
import { errorCatalogueMarkdown } from '../schemas/error-catalogue-doc.js';
import { openApiDocument } from '../schemas/openapi.js';

writeFileSync('schemas/openapi.json', `${JSON.stringify(openApiDocument, null, 2)}\n`);
writeFileSync('schemas/admin.graphql', `${printSchema(adminSchema)}\n`);
writeFileSync('docs/errors.md', errorCatalogueMarkdown());
process.stdout.write('wrote schemas/openapi.json, schemas/admin.graphql and docs/errors.md\n');
