import { Transform, type TransformOptions } from 'node:stream';
import { ApiError, EngineError } from './errors.js';

/**
 * A pipeline stage made of a per-chunk function: what it returns is passed on (undefined: nothing),
 * and what it throws fails the stage, and so its pipeline and its task, never the process. Node calls
 * a Transform's `transform` from inside the writer's `write`, often in an event handler, where a
 * throw would be uncaught: every stage of the service is made here so that none can throw there.
 */
export function streamStage<In, Out>(
  options: Omit<TransformOptions, 'transform' | 'flush'>,
  each: (chunk: In) => Out | undefined,
  end?: () => Out | undefined,
): Transform {
  const settle = (step: () => Out | undefined, done: (err?: Error | null, out?: Out) => void) => {
    let out: Out | undefined;
    try {
      out = step();
    } catch (err) {
      done(stageFault(err));
      return;
    }
    done(null, out);
  };
  return new Transform({
    ...options,
    transform: (chunk: In, _enc, done) => settle(() => each(chunk), done),
    ...(end ? { flush: (done) => settle(end, done) } : {}),
  });
}

/**
 * A stage's own error as it is; anything else as a StageFault, which ends the task at once: the
 * same code on the same input would throw again. Its message names the error's kind, never the
 * content that caused it.
 */
function stageFault(err: unknown): Error {
  if (err instanceof EngineError || err instanceof ApiError) return err;
  const kind = err instanceof Error ? err.name : typeof err;
  return new EngineError('StageFault', `a pipeline stage failed (${kind})`, { cause: err });
}
