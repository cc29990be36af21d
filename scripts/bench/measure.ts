/** Throughput of `clients` concurrent loops of `call`, in calls per second. */
export async function throughput(
  clients: number,
  seconds: number,
  call: () => Promise<void>,
): Promise<number> {
  const deadline = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
  let done = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (process.hrtime.bigint() < deadline) {
        await call();
        done++;
      }
    }),
  );
  return done / (Number(process.hrtime.bigint() - started) / 1e9);
}
