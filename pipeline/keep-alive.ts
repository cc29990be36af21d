// The one "sign of life while working" of the service: lease renewals, a coordinator's look at its
// parts, a consumer's heartbeats while its handler waits.

/** A beat that runs every interval until stopped. */
export interface Beating {
  stop(): void;
}

/**
 * Runs `beat` every `intervalMs` until stopped, one at a time: a beat still running when the next
 * is due (a slow database) is not doubled, the tick is passed over. A beat handles its own
 * failures; a rejection left to the helper is dropped, as the next beat tries again.
 */
export function keepBeating(beat: () => Promise<unknown>, intervalMs: number): Beating {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    beat()
      .catch(() => {})
      .finally(() => {
        running = false;
      });
  }, intervalMs);
  return { stop: () => clearInterval(timer) };
}

/** Runs `work` with `beat` every `intervalMs` beside it, and stops the beat when the work settles. */
export async function whileWorking<T>(
  beat: () => Promise<unknown>,
  intervalMs: number,
  work: () => Promise<T>,
): Promise<T> {
  const beating = keepBeating(beat, intervalMs);
  try {
    return await work();
  } finally {
    beating.stop();
  }
}
