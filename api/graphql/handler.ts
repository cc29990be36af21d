import { type DocumentNode, GraphQLError, parse, validate } from 'graphql';
import { createHandler } from 'graphql-http/lib/use/koa';
import type { Middleware } from 'koa';
import { LRUCache } from 'lru-cache';
import type { ProjectConfig } from '../../pipeline/config.js';
import type { Queryable } from '../../pipeline/db/pool.js';
import type { Logger } from '../../pipeline/log.js';
import type { UserSearchIndex } from '../../pipeline/search/user-search.js';
import { toApiError } from '../errors.js';
import { compiledExecute } from './compiled-execute.js';
import type { GraphQLContext } from './context.js';
import { userLookups } from './lookup-batches.js';
import { adminSchema } from './schema.js';

/** Admin clients send the same few documents over and over: parse and validate each once. */
const MAX_CACHED_DOCUMENTS = 500;
/** Longer documents are parsed every time, so the cache stays small whatever clients send. */
const MAX_CACHED_DOCUMENT_LENGTH = 8 * 1024;

/**
 * The graph interface over HTTP (GET and POST, graphql-over-HTTP). Resolver errors in the API's
 * vocabulary carry `extensions: {errorName, reason, info?}`; any other error is masked as an
 * InternalError and logged, so no SQL text or stack reaches the caller.
 */
export function graphqlHandler(
  db: Queryable,
  project: ProjectConfig,
  search: UserSearchIndex,
  log: Logger,
): Middleware {
  const documents = new LRUCache<string, DocumentNode>({ max: MAX_CACHED_DOCUMENTS });
  const validated = new WeakSet<DocumentNode>();
  const context: GraphQLContext = { db, lookups: userLookups(db), project, search };

  return createHandler<GraphQLContext>({
    schema: adminSchema,
    context,
    parse: (source) => {
      const text = typeof source === 'string' ? source : source.body;
      let document = documents.get(text);
      if (!document) {
        document = parse(source);
        if (text.length <= MAX_CACHED_DOCUMENT_LENGTH) documents.set(text, document);
      }
      return document;
    },
    validate: (schema, document, rules) => {
      if (validated.has(document)) return [];
      const errors = validate(schema, document, rules);
      if (errors.length === 0) validated.add(document);
      return errors;
    },
    execute: compiledExecute(),
    formatError: (err) => formatGraphQLError(err, log),
  });
}

/** Maps a resolver's error to the GraphQL error a client sees. */
export function formatGraphQLError(err: Readonly<GraphQLError | Error>, log: Logger): GraphQLError | Error {
  if (!(err instanceof GraphQLError) || err.originalError === undefined) return err;
  const original = err.originalError;
  const api = toApiError(original);
  if (api.name === 'InternalError') log.error({ err: original, path: err.path }, 'graphql resolver failed');
  return new GraphQLError(api.message, {
    ...(err.nodes ? { nodes: err.nodes } : {}),
    ...(err.path ? { path: err.path } : {}),
    extensions: { errorName: api.name, reason: api.reason, ...(api.info ? { info: api.info } : {}) },
  });
}
