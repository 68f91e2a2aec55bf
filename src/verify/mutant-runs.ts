import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeJsonAtomic } from "../core/fs-atomic.js";
import type { RunOutcome, RunRequest } from "../runner/types.js";
import type { Mutant } from "./mutants.js";

/** What the fast mutant path knows before it runs a mutant. */
export interface MutantPlan {
  /** From a traced reference run: test id → file → executed lines. Absent: every mutant runs the whole suite. */
  coverage?: Record<string, Record<string, number[]>>;
  /** Tests that killed mutants of this task before (this run and earlier ones), tried first. */
  killers: string[];
  /** The grader's mount folder: test ids start with `<mount>/`. */
  mount: string;
}

/** killed: a test failed; survived: every test passed; uncovered: survived, and no test reaches its lines. */
export type MutantFate = "killed" | "survived" | "uncovered";

export interface MutantResult {
  fate: MutantFate;
  /** The outcome that decided it (the last run). */
  outcome: RunOutcome;
  /** The first test that failed, for a killed mutant. */
  killer?: string;
  /** Test runs it took (1, or 2 when a survivor of its covering tests was confirmed on the whole suite). */
  runs: number;
}

type Run = (overlay: Record<string, string>, extra: Partial<RunRequest>) => Promise<RunOutcome>;

/**
 * Runs one mutant so that the verdict is exactly what the whole suite would give,
 * but cheaply: first only the tests that execute the mutated lines on the
 * reference, known killers first, stopping at the first failure; a mutant that
 * survives them (or that no test reaches) runs once more on the whole suite,
 * so a test that reaches it in a way tracing cannot see (a subprocess) still counts.
 */
export async function runMutant(file: string, mutant: Mutant, overlay: Record<string, string>, plan: MutantPlan, run: Run): Promise<MutantResult> {
  const decide = (o: RunOutcome, runs: number, covered: boolean): MutantResult => {
    if (o.status === "passed") return { fate: covered ? "survived" : "uncovered", outcome: o, runs };
    const killer = o.tests.find((t) => t.status === "failed" || t.status === "error")?.id;
    return { fate: "killed", outcome: o, runs, ...(killer ? { killer } : {}) };
  };
  if (!plan.coverage) return decide(await run(overlay, {}), 1, true);
  const covering = coveringTests(plan.coverage, file, mutant.lines);
  const first = orderFirst(plan.killers, covering);
  let runs = 0;
  if (covering.length > 0) {
    const prefix = `${plan.mount}/`;
    const paths = covering.map((id) => (id.startsWith(prefix) ? id.slice(prefix.length) : id));
    const subset = await run(overlay, { testPaths: paths, firstTests: first, stopAtFirstFailure: true });
    runs++;
    if (subset.status !== "passed") return decide(subset, runs, true);
  }
  const whole = await run(overlay, { firstTests: plan.killers, stopAtFirstFailure: true });
  return decide(whole, runs + 1, covering.length > 0);
}

/** Tests that executed any line of [from, to] of `file` on the reference. */
export function coveringTests(coverage: Record<string, Record<string, number[]>>, file: string, [from, to]: [number, number]): string[] {
  return Object.entries(coverage)
    .filter(([, files]) => (files[file] ?? []).some((l) => l >= from && l <= to))
    .map(([id]) => id);
}

function orderFirst(killers: string[], among: string[]): string[] {
  const set = new Set(among);
  return killers.filter((k) => set.has(k));
}

/** Killers remembered per grader hash, so the next verify of the same tests tries them first. */
export async function readKillers(cacheDir: string, graderHash: string): Promise<string[]> {
  try {
    const v = JSON.parse(await readFile(killersFile(cacheDir, graderHash), "utf8")) as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
  } catch {
    return [];
  }
}

export async function writeKillers(cacheDir: string, graderHash: string, killers: string[]): Promise<void> {
  await mkdir(join(cacheDir, "verify"), { recursive: true });
  await writeJsonAtomic(killersFile(cacheDir, graderHash), killers);
}

const killersFile = (cacheDir: string, graderHash: string): string => join(cacheDir, "verify", `killers-${graderHash}.json`);
