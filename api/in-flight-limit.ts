import type { Middleware } from 'koa';

/**
 * Lets at most `max` requests through to what follows at once; the others wait their turn, in
 * order, before anything reads their bodies. An import request becomes about ten times its 500 KB
 * once parsed: without a bound, a hundred clients held a gigabyte in the facade.
 */
export function inFlightLimit(max: number): Middleware {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (_ctx, next) => {
    if (running >= max) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    try {
      await next();
    } finally {
      const nextInLine = waiting.shift();
      if (nextInLine) nextInLine();
      else running--;
    }
  };
}
