import { classifyFault } from './errors.js';
import type { Logger } from './log.js';

// The one loop behind every outbox relay (task messages, user changes): a round now and then, at
// once again when woken during one or when the round left more waiting, faults logged and retried
// by the next round.

/** A running relay loop. */
export interface RelayLoop {
  /** Something was just written to the outbox: run a round now rather than at the next tick. */
  wake(): void;
  /** Ends the loop after the round at hand. */
  stop(): Promise<void>;
}

/**
 * Runs `round` every `everyMs` until stopped. A round resolves true when it left more waiting (a
 * full batch), and the next one starts at once; a round that throws met a dependency that is down,
 * and is logged (as `what`) and tried again at the next tick.
 */
export function startRelayLoop(
  what: string,
  everyMs: number,
  log: Logger,
  round: () => Promise<boolean>,
): RelayLoop {
  let stopped = false;
  let wakeUp: (() => void) | undefined;
  let wokenDuringRound = false;

  const loop = (async () => {
    while (!stopped) {
      let more = false;
      try {
        wokenDuringRound = false;
        more = await round();
      } catch (err) {
        log.warn({ err, fault: classifyFault(err) }, `${what} failed; the next round tries again`);
      }
      // A wake-up that came during the round (a row written meanwhile) means another round now,
      // after the rest of the process had its turn.
      if (stopped) break;
      if (more || wokenDuringRound) {
        await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, everyMs);
        wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wakeUp = undefined;
    }
  })();

  return {
    wake: () => {
      if (wakeUp) wakeUp();
      else wokenDuringRound = true;
    },
    async stop() {
      stopped = true;
      wakeUp?.();
      await loop;
    },
  };
}
