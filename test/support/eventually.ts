import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Reads `read` every `everyMs` until `done` holds of its value, for `seconds` at most, and returns
 * the last value read: tests wait on a condition, never on the clock alone.
 */
export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  seconds = 30,
  everyMs = 50,
): Promise<T> {
  const end = Date.now() + seconds * 1000;
  let value = await read();
  while (!done(value) && Date.now() < end) {
    await sleep(everyMs);
    value = await read();
  }
  return value;
}
