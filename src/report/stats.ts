/**
 * Interval and agreement statistics for reports. The bootstrap is seeded, so
 * the same results always give the same interval (a report can be diffed).
 */

import { mulberry32 } from "../core/random.js";

export interface BootstrapInterval {
  low: number;
  high: number;
  /** 0.95 */
  level: number;
  resamples: number;
  seed: number;
}

const BOOTSTRAP_RESAMPLES = 2000;
const BOOTSTRAP_SEED = 20240601;

/**
 * Percentile bootstrap interval of the mean of `values` (one per task: tasks
 * are the unit resampled, with replacement). null for no values.
 */
export function bootstrapMeanInterval(values: number[], opts: { level?: number; resamples?: number; seed?: number } = {}): BootstrapInterval | null {
  const n = values.length;
  if (n === 0) return null;
  const level = opts.level ?? 0.95;
  const resamples = opts.resamples ?? BOOTSTRAP_RESAMPLES;
  const seed = opts.seed ?? BOOTSTRAP_SEED;
  const random = mulberry32(seed);
  const means = new Float64Array(resamples);
  for (let b = 0; b < resamples; b++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += values[Math.floor(random() * n)]!;
    means[b] = sum / n;
  }
  means.sort();
  const q = (p: number): number => means[Math.min(resamples - 1, Math.max(0, Math.floor(p * resamples)))]!;
  const tail = (1 - level) / 2;
  return { low: round(q(tail)), high: round(q(1 - tail)), level, resamples, seed };
}

/**
 * Tests (pass / not) against the judge ("fully-correct" / not), one pair per
 * sample: the 2×2 counts, the observed agreement and Cohen's κ. κ is null
 * when chance agreement is 1 (both raters put every sample in one class):
 * agreement beyond chance is then undefined.
 */
export interface Agreement {
  samples: number;
  /** tests pass, judge fully-correct */
  both_pass: number;
  /** tests pass, judge not fully-correct */
  tests_only: number;
  /** tests fail, judge fully-correct */
  judge_only: number;
  /** tests fail, judge not fully-correct */
  both_fail: number;
  observed: number | null;
  kappa: number | null;
}

export function agreementOf(pairs: { tests: boolean; judge: boolean }[]): Agreement {
  const count = (t: boolean, j: boolean): number => pairs.filter((p) => p.tests === t && p.judge === j).length;
  const a = count(true, true);
  const b = count(true, false);
  const c = count(false, true);
  const d = count(false, false);
  const n = pairs.length;
  if (n === 0) return { samples: 0, both_pass: 0, tests_only: 0, judge_only: 0, both_fail: 0, observed: null, kappa: null };
  const po = (a + d) / n;
  const pe = ((a + b) * (a + c) + (c + d) * (b + d)) / (n * n);
  return { samples: n, both_pass: a, tests_only: b, judge_only: c, both_fail: d, observed: round(po), kappa: pe >= 1 ? null : round((po - pe) / (1 - pe)) };
}

function round(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
