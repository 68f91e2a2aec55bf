import { LmrError } from "../core/errors.js";
import { sha256 } from "../core/hash.js";
import type { RunShard, SampleKey } from "../run-folder/index.js";

/** `--shard I/N`: this run grades the I-th of N parts (1-based) of the (task, model, sample) triples. */
export interface ShardSpec {
  index: number;
  count: number;
}

/** What run.json records of a shard: which part, and the plan (every triple and grading key) all parts were cut from. */
export type ShardRecord = RunShard;

/** Parses "I/N" (1 <= I <= N), the way batch schedulers number array tasks. */
export function parseShard(value: string): ShardSpec {
  const m = /^(\d+)\/(\d+)$/.exec(value.trim());
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || index < 1 || index > count) {
    throw new LmrError({
      code: "usage/bad-shard",
      pointer: "--shard",
      message: `--shard must be I/N with 1 <= I <= N, got '${value}'`,
      hint: "e.g. --shard 1/4 … --shard 4/4; a Kubernetes Indexed Job passes $((JOB_COMPLETION_INDEX+1))/N, Slurm $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT",
    });
  }
  return { index, count };
}

/**
 * The shard (1-based) a triple belongs to. A hash of the triple, not its
 * position: a triple stays in its shard when rows are added or removed, so a
 * shard resumed after the submissions grew regrades nothing it had.
 */
export function pickShard(key: SampleKey, count: number): number {
  const h = sha256(JSON.stringify([key.task_id, key.model, key.sample]));
  return (parseInt(h.slice(0, 12), 16) % count) + 1;
}

/** The plan id of a whole run: every triple with its grading key, in a fixed order. */
export function hashPlan(jobs: readonly { key: SampleKey; gradingKey: string }[]): string {
  const lines = jobs.map((j) => JSON.stringify([j.key.task_id, j.key.model, j.key.sample, j.gradingKey])).sort();
  return sha256(lines.join("\n"));
}
