export interface BenchContext {
  /** A smaller run (a tenth of the inputs), for a quick look. */
  quick: boolean;
  /** Progress lines (stderr). */
  log: (line: string) => void;
}

export interface BenchRow {
  name: string;
  pairs: number;
  ts_defs_per_s: number;
  py_defs_per_s: number;
  /** TS time / Python time: below 1 means TS is faster. */
  ratio: number;
  failures: number;
}

export interface BenchResult {
  name: string;
  /** The two sides' names in the table (default "TS" and "Python"). */
  labels?: [string, string];
  rows: BenchRow[];
  notes: string[];
}

export interface Bench {
  name: string;
  description: string;
  run: (ctx: BenchContext) => Promise<BenchResult>;
}
