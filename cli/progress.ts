import cliProgress from 'cli-progress';

/** Figures a long command reports as it goes. */
export interface ProgressFigures {
  readonly done: number;
  readonly total: number;
  /** Words after the bar: "1,200 sent, 1,000 applied". */
  readonly detail: string;
  /** Units per second so far, named: "records/s". */
  readonly rate: string;
}

/** Shows progress on stderr: a bar on a terminal, otherwise a plain line every few seconds. */
export interface Progress {
  update(figures: ProgressFigures): void;
  /** Ends the display; `final` false (the command failed) leaves out the last figures. */
  stop(final?: boolean): void;
}

const PLAIN_EVERY_MS = 5_000;

export function progressOnStderr(label: string): Progress {
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        stream: process.stderr,
        format: `${label} {bar} {percentage}% | {detail} | {rate} | ETA {eta_formatted}`,
        etaBuffer: 50,
        hideCursor: true,
      },
      cliProgress.Presets.shades_classic,
    );
    let started = false;
    return {
      update({ done, total, detail, rate }) {
        if (!started) {
          bar.start(Math.max(total, 1), done, { detail, rate });
          started = true;
        } else {
          bar.setTotal(Math.max(total, 1));
          bar.update(done, { detail, rate });
        }
      },
      stop: () => {
        if (started) bar.stop();
        started = false;
      },
    };
  }
  let last = Date.now(); // the first line after a few seconds: a short command prints only its summary
  let latest: ProgressFigures | undefined;
  const print = (f: ProgressFigures) => process.stderr.write(`${label}: ${f.detail}, ${f.rate}\n`);
  return {
    update(figures) {
      latest = figures;
      if (Date.now() - last < PLAIN_EVERY_MS) return;
      last = Date.now();
      print(figures);
    },
    stop: (final = true) => {
      if (latest && final) print(latest);
      latest = undefined;
    },
  };
}

/** A count with thousands separators. */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}
