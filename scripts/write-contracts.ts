// `npm run contracts`: writes the checked-in contracts the service serves: schemas/openapi.json
// (built from the JSON Schemas) and schemas/admin.graphql (the GraphQL schema's SDL). A test fails
// when either differs from what the service serves.
import { writeFileSync } from 'node:fs';
import { printSchema } from 'graphql';
import { adminSchema } from '../api/graphql/schema.js';
import { openApiDocument } from '../schemas/openapi.js';

writeFileSync('schemas/openapi.json', `${JSON.stringify(openApiDocument, null, 2)}\n`);
writeFileSync('schemas/admin.graphql', `${printSchema(adminSchema)}\n`);
process.stdout.write('wrote schemas/openapi.json and schemas/admin.graphql\n');
