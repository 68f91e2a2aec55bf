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
  /** Every test of the traced reference run (with `coverage`): a survivor of its covering tests then runs only the others. */
  tests?: string[];
  /** The grader's mount folder: test ids start with `<mount>/`. */
  mount: string;
}

/** killed: a test failed; survived: every test passed; uncovered: survived, and no test reaches its lines. */
type MutantFate = "killed" | "survived" | "uncovered";

export interface MutantResult {
  fate: MutantFate;
  /** The outcome that decided it (the last run). */
  outcome: RunOutcome;
  /** The first test that failed, for a killed mutant. */
  killer?: string;
  /** Test runs it took (1, or 2 when a survivor of its covering tests then ran the other tests). */
  runs: number;
}

type Run = (overlay: Record<string, string>, extra: Partial<RunRequest>) => Promise<RunOutcome>;

/**
 * Runs one mutant so that the verdict is what the whole suite would give, but
 * cheaply: first only the tests that execute the mutated lines on the reference,
 * known killers first, stopping at the first failure; a mutant that survives them
 * runs once more on every other test (the whole suite when no test reaches it), so a
 * test that reaches it in a way tracing cannot see (a subprocess) still counts.
 */
export async function runMutant(file: string, mutant: Mutant, overlay: Record<string, string>, plan: MutantPlan, run: Run): Promise<MutantResult> {
  const decide = (o: RunOutcome, runs: number, covered: boolean): MutantResult => {
    if (o.status === "passed") return { fate: covered ? "survived" : "uncovered", outcome: o, runs };
    const killer = o.tests.find((t) => t.status === "failed" || t.status === "error")?.id;
    return { fate: "killed", outcome: o, runs, ...(killer ? { killer } : {}) };
  };
  if (!plan.coverage) return decide(await run(overlay, {}), 1, true);
  const covering = coveringTests(plan.coverage, file, mutant.lines);
  if (covering.length === 0) return decide(await run(overlay, { firstTests: plan.killers, stopAtFirstFailure: true }), 1, false);
  const prefix = `${plan.mount}/`;
  const paths = covering.map((id) => (id.startsWith(prefix) ? id.slice(prefix.length) : id));
  const subset = await run(overlay, { testPaths: paths, firstTests: orderFirst(plan.killers, covering), stopAtFirstFailure: true });
  if (subset.status !== "passed") return decide(subset, 1, true);
  if (!plan.tests) return decide(await run(overlay, { firstTests: plan.killers, stopAtFirstFailure: true }), 2, true);
  // the covering tests passed: the others decide, and where there are none the mutant survived
  const reached = new Set(covering);
  const rest = plan.tests.filter((id) => !reached.has(id));
  if (rest.length === 0) return decide(subset, 1, true);
  const others = await run(overlay, { deselect: covering, firstTests: orderFirst(plan.killers, rest), stopAtFirstFailure: true });
  return decide(others, 2, true);
}

/** Tests that executed any line of [from, to] of `file` on the reference. */
function coveringTests(coverage: Record<string, Record<string, number[]>>, file: string, [from, to]: [number, number]): string[] {
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
