import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import {
  type DocumentNode,
  GraphQLError,
  type GraphQLSchema,
  Kind,
  type ValidationContext,
  type ValidationRule,
  validate,
  visit,
} from 'graphql';
import { createComplexityRule } from 'graphql-query-complexity';
import { ApiError } from '../../pipeline/errors.js';
import { type ErrorReason, isErrorReason } from '../../schemas/error-reasons.js';

/**
 * What one GraphQL request may ask of the facade (README, Limits). Each refusal is a 400
 * `Invalid` in the error envelope whose reason names the limit, before anything reads the database.
 */
export const GRAPHQL_LIMITS = {
  /** Bytes of the document (`query`). */
  documentBytes: 16 * 1024,
  /** Nested selections. */
  depth: 10,
  /** Aliased fields in one operation. */
  aliases: 20,
  /** The cost of an operation: a field costs 1 plus its selections, times its `first` when given. */
  cost: 100_000,
  /** Requests executed at once by one facade process; the others wait their turn. */
  inFlight: 16,
} as const;

/** A refusal of the graph interface, as a validation rule reports it. */
function limitError(reason: ErrorReason, message: string, limit: number): GraphQLError {
  return new GraphQLError(message, { extensions: { reason, limit } });
}

/** Refuses a document longer than `GRAPHQL_LIMITS.documentBytes`. */
export function checkDocumentSize(text: string): void {
  if (Buffer.byteLength(text) > GRAPHQL_LIMITS.documentBytes) {
    const limit = GRAPHQL_LIMITS.documentBytes;
    throw new ApiError('GraphQLDocumentTooLarge', `the document is longer than ${limit} bytes`, {
      limit,
    });
  }
}

/**
 * What is known of each document: its verdict when its limits depend on it alone (the refusal, or
 * null once it passed), or `per request` when its cost depends on its variables. Lookups send the
 * same few documents with other variables: their limits are judged once, not on every request.
 */
const verdicts = new WeakMap<DocumentNode, ApiError | null | 'per request'>();

/**
 * Checks a parsed document against every limit (depth, aliases, cost) and throws the refusal of
 * the first it passes; a document whose cost depends on its variables is judged on every request.
 */
export function checkOperationLimits(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Readonly<Record<string, unknown>> | undefined,
): void {
  const known = verdicts.get(document);
  if (known !== undefined && known !== 'per request') {
    if (known) throw known;
    return;
  }
  const refusal = refusalOf(schema, document, variables);
  if (known === undefined) verdicts.set(document, costDependsOnVariables(document) ? 'per request' : refusal);
  if (refusal) throw refusal;
}

function refusalOf(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Readonly<Record<string, unknown>> | undefined,
): ApiError | null {
  const refusals = validate(schema, document, [...documentLimitRules, costLimitRule(variables)]);
  for (const refusal of refusals) {
    const { reason, limit } = refusal.extensions as { reason?: unknown; limit?: unknown };
    // An error of the spec's own rules (an unknown field, say) is left to the handler to answer.
    if (typeof reason === 'string' && isErrorReason(reason))
      return new ApiError(reason, refusal.message, { limit });
  }
  return null;
}

/**
 * Whether the cost of the document depends on its variables: a `first`, or the `if` of an
 * `@include` or `@skip`, given by a variable.
 */
function costDependsOnVariables(document: DocumentNode): boolean {
  let byVariable = false;
  const costly = new Set(['first', 'if']);
  visit(document, {
    Argument(node) {
      if (costly.has(node.name.value) && node.value.kind === Kind.VARIABLE) byVariable = true;
    },
  });
  return byVariable;
}

/** Reports graphql-armor's refusal as ours: the same message, our reason. */
const report =
  (reason: ErrorReason, limit: number) =>
  (context: ValidationContext | null, err: GraphQLError): void =>
    context?.reportError(limitError(reason, err.message.replace(/^Syntax Error: /, ''), limit));

/** The limits that depend on the document alone. */
const documentLimitRules: readonly ValidationRule[] = [
  maxDepthRule({
    n: GRAPHQL_LIMITS.depth,
    propagateOnRejection: false,
    onReject: [report('GraphQLDepthLimitExceeded', GRAPHQL_LIMITS.depth)],
  }),
  maxAliasesRule({
    n: GRAPHQL_LIMITS.aliases,
    propagateOnRejection: false,
    onReject: [report('GraphQLAliasLimitExceeded', GRAPHQL_LIMITS.aliases)],
  }),
];

/** The cost limit, which depends on the variables too (`first: $n`). */
function costLimitRule(variables: Readonly<Record<string, unknown>> | undefined): ValidationRule {
  return createComplexityRule({
    maximumComplexity: GRAPHQL_LIMITS.cost,
    variables: { ...variables },
    estimators: [
      // A page's size when asked for; a connection without `first` is counted once: the user list
      // then answers a small default page, and a user's own lists come loaded with the user.
      ({ args, childComplexity }) =>
        (typeof args.first === 'number' ? Math.max(args.first, 1) : 1) * (1 + childComplexity),
    ],
    createError: (max, actual) =>
      limitError('GraphQLCostLimitExceeded', `the operation costs ${actual}, more than ${max}`, max),
  });
}
