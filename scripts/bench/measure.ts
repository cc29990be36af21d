/** Latency percentiles of sequential calls, and throughput of `clients` concurrent loops. */
export interface Latency {
  readonly p50: number;
  readonly p99: number;
}

export async function sequentialLatency(calls: number, call: () => Promise<void>): Promise<Latency> {
  const samples = new Float64Array(calls);
  for (let n = 0; n < calls; n++) {
    const started = process.hrtime.bigint();
    await call();
    samples[n] = Number(process.hrtime.bigint() - started) / 1e6;
  }
  samples.sort();
  const at = (q: number) => samples[Math.min(calls - 1, Math.floor(q * calls))] ?? Number.NaN;
  return { p50: at(0.5), p99: at(0.99) };
}

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
