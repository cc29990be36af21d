import { mkdirSync, writeFileSync } from 'node:fs';

/** One row of `make bench`, as written to .bench/results.json. */
export interface BenchRow {
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  readonly baseline: string;
  readonly baseline_value: number;
  readonly ratio: number;
  /** Shown in the table only: the goal for this row. */
  readonly goal?: string;
}

export function row(
  name: string,
  value: number,
  unit: string,
  baseline: string,
  baselineValue: number,
  goal?: string,
): BenchRow {
  return {
    name,
    value: round(value),
    unit,
    baseline,
    baseline_value: round(baselineValue),
    ratio: round(value / baselineValue),
    ...(goal ? { goal } : {}),
  };
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

const RESULTS = '.bench/results.json';

/**
 * The rows of one run, written to .bench/results.json as each section measures them: a section
 * that fails late in the run keeps the rows measured before it.
 */
export class BenchReport {
  readonly #rows: BenchRow[] = [];

  constructor() {
    this.#write();
  }

  /** Adds a section's rows, prints them and rewrites the results file. */
  add(rows: readonly BenchRow[]): void {
    this.#rows.push(...rows);
    for (const r of rows) process.stdout.write(`row: ${r.name} = ${r.value} ${r.unit} (ratio ${r.ratio})\n`);
    this.#write();
  }

  /** Prints the table of every row so far. */
  print(): void {
    const header = ['name', 'value', 'unit', 'baseline', 'baseline value', 'ratio', 'goal'];
    const cells = this.#rows.map((r) => [
      r.name,
      String(r.value),
      r.unit,
      r.baseline,
      String(r.baseline_value),
      String(r.ratio),
      r.goal ?? '',
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? '').length)));
    const line = (c: readonly string[]) => c.map((v, i) => v.padEnd(widths[i] ?? 0)).join('  ');
    process.stdout.write(`\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n`);
    for (const c of cells) process.stdout.write(`${line(c)}\n`);
    process.stdout.write(`\nrows written to ${RESULTS}\n`);
  }

  #write(): void {
    mkdirSync('.bench', { recursive: true });
    const rows = this.#rows.map(({ goal: _goal, ...r }) => r);
    writeFileSync(RESULTS, `${JSON.stringify(rows, null, 2)}\n`);
  }
}
