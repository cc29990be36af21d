import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Reads `read` every 50 ms until `done` holds of its value, for `seconds` at most, and returns the
 * last value read: tests wait on a condition, never on the clock alone.
 */
export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  seconds = 30,
): Promise<T> {
  const end = Date.now() + seconds * 1000;
  let value = await read();
  while (!done(value) && Date.now() < end) {
    await sleep(50);
    value = await read();
  }
  return value;
}
