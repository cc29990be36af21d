import type { IncomingMessage } from 'node:http';
import { type DocumentNode, GraphQLError, parse, type Source, validate } from 'graphql';
import { createHandler } from 'graphql-http/lib/use/koa';
import type { Middleware } from 'koa';
import { LRUCache } from 'lru-cache';
import { ApiError } from '../../pipeline/errors.js';
import type { Logger } from '../../pipeline/log.js';
import { toApiError } from '../errors.js';
import { inFlightLimit } from '../in-flight-limit.js';
import { jsonBody } from '../json-body.js';
import { scopeOf } from '../project-scope.js';
import { compiledExecute } from './compiled-execute.js';
import type { GraphQLContext } from './context.js';
import { checkDocumentSize, checkOperationLimits, GRAPHQL_LIMITS } from './limits.js';
import { adminSchema } from './schema.js';

/** Admin clients send the same few documents over and over: parse and validate each once. */
const MAX_CACHED_DOCUMENTS = 500;
/** Longer documents are parsed every time, so the cache stays small whatever clients send. */
const MAX_CACHED_DOCUMENT_LENGTH = 8 * 1024;

/** Bytes of a GraphQL request body: the document and its variables. */
const GRAPHQL_BODY_LIMIT = '256kb';

/**
 * The graph interface over HTTP (GET and POST, graphql-over-HTTP), as the middleware of its
 * route: at most `GRAPHQL_LIMITS.inFlight` requests at once, the body, the limits, the handler.
 * Resolver errors in the API's vocabulary carry `extensions: {errorName, reason, info?}`; any
 * other error is masked as an InternalError and logged, so no SQL text or stack reaches the caller.
 */
export function graphqlHandler(log: Logger): Middleware[] {
  const documents = new LRUCache<string, DocumentNode>({ max: MAX_CACHED_DOCUMENTS });
  const validated = new WeakSet<DocumentNode>();
  // The request's project (its scope's context), by the request the handler is given.
  const contexts = new WeakMap<IncomingMessage, GraphQLContext>();
  const withContext: Middleware = async (ctx, next) => {
    contexts.set(ctx.req, scopeOf(ctx).graphql);
    await next();
  };
  const parseDocument = (source: string | Source) => {
    const text = typeof source === 'string' ? source : source.body;
    let document = documents.get(text);
    if (!document) {
      document = parse(source);
      if (text.length <= MAX_CACHED_DOCUMENT_LENGTH) documents.set(text, document);
    }
    return document;
  };

  /** Refuses, before anything runs, a request past one of `GRAPHQL_LIMITS`. */
  const limits: Middleware = async (ctx, next) => {
    const params = (ctx.method === 'GET' ? ctx.query : ctx.request.body) as
      | Record<string, unknown>
      | undefined;
    const query = params?.query;
    if (typeof query === 'string') {
      checkDocumentSize(query);
      const document = parsedOrUndefined(() => parseDocument(query));
      if (document) checkOperationLimits(adminSchema, document, variablesOf(params?.variables));
    }
    await next();
  };

  const handler = createHandler<GraphQLContext>({
    schema: adminSchema,
    context: (req) => {
      const context = contexts.get(req.raw);
      if (!context) throw new ApiError('UnexpectedError', 'no project context for this request');
      return context;
    },
    parse: parseDocument,
    validate: (schema, document, rules) => {
      if (validated.has(document)) return [];
      const errors = validate(schema, document, rules);
      if (errors.length === 0) validated.add(document);
      return errors;
    },
    execute: compiledExecute(),
    formatError: (err) => formatGraphQLError(err, log),
  });
  return [inFlightLimit(GRAPHQL_LIMITS.inFlight), jsonBody(GRAPHQL_BODY_LIMIT), limits, withContext, handler];
}

/** The document, or undefined when it does not parse: the handler answers its syntax error. */
function parsedOrUndefined(parseIt: () => DocumentNode): DocumentNode | undefined {
  try {
    return parseIt();
  } catch {
    return undefined;
  }
}

/** The variables of a request: an object in a POST body, JSON text in a GET query. */
function variablesOf(value: unknown): Record<string, unknown> | undefined {
  if (typeof value === 'string') return variablesOf(parsedJson(value));
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
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
