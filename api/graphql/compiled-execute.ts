import { type DocumentNode, type ExecutionArgs, type ExecutionResult, execute } from 'graphql';
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';

/**
 * graphql-js `execute`, but each (document, operation) is compiled once into a plain function by
 * graphql-jit: a lookup then costs a few property reads instead of a walk of the document. The
 * documents come from the handler's parse cache, so the compiled forms live as long as they do.
 */
export function compiledExecute(): (args: ExecutionArgs) => ReturnType<typeof execute> {
  const compiled = new WeakMap<DocumentNode, Map<string, CompiledQuery>>();

  return (args) => {
    const operation = args.operationName ?? '';
    const byOperation = compiled.get(args.document) ?? new Map<string, CompiledQuery>();
    let query = byOperation.get(operation);
    if (!query) {
      const result = compileQuery(args.schema, args.document, args.operationName ?? undefined);
      // A document graphql-jit cannot compile runs on the reference executor, with its errors.
      if (!isCompiledQuery(result)) return execute(args);
      query = result;
      byOperation.set(operation, query);
      compiled.set(args.document, byOperation);
    }
    return query.query(args.rootValue, args.contextValue, args.variableValues) as
      | ExecutionResult
      | Promise<ExecutionResult>;
  };
}
