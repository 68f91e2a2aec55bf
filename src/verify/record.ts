import type { GiveawayResult } from "./giveaway.js";
import type { Leak } from "../bundle/leak-scan.js";
import type { RemovedEntry } from "../bundle/types.js";
import type { BackendName, ImageRecord, RunStatus } from "../runner/types.js";
import type { ServerPlan } from "./server-plan.js";

export const VERIFICATION_FILE = "verification.json";
export const VERIFICATION_SCHEMA_VERSION = 2;

/** The checks of a verification, in the order they run. */
export type StepName = "manifest" | "build" | "fixtures" | "reference" | "environment" | "stub" | "alternatives" | "mutants" | "leaks";
export const STEP_NAMES: readonly StepName[] = ["manifest", "build", "fixtures", "reference", "environment", "stub", "alternatives", "mutants", "leaks"];

/** A test that failed, with the start of its assertion message. */
export interface FailingTest {
  id: string;
  message: string;
}

export interface RunSummary {
  status: RunStatus;
  passed: number;
  failed: number;
  errors: number;
  duration_s: number;
  reason?: string;
  /** For a reference run that did not pass: the first failing tests and their messages. */
  failing?: FailingTest[];
}

export interface StepRecord {
  ok: boolean;
  /** The step did not run: an earlier one failed (ok false), or it was not asked for (ok true, e.g. mutants: 0). */
  skipped?: boolean;
  reason?: string;
  /** The step failed because the toolkit could not run it (interpreter, sandbox, network), not because of the task. */
  infra?: boolean;
  duration_s: number;
}

export interface RunsStep extends StepRecord {
  runs: RunSummary[];
  /** Tests whose outcome changed between runs (at most 20 listed). */
  flaky_tests?: string[];
  /** Stub: tests that failed inside the test in every run (at most 20 listed). */
  failing_every_run?: string[];
  /** Reference: every test it ran, sorted: the graded set lmr eval requires of every run. */
  tests?: string[];
  /** Reference: the tests it skipped, which a run may skip too. */
  skipped_tests?: string[];
  /**
   * Reference: where the fork servers' plan came from: this machine's cache or the committed
   * record (run 1 ran in a server), or run 1 as a fresh process (`first-run`); absent without servers.
   */
  plan_source?: "cache" | "record" | "first-run";
}

export interface MutantsStep extends StepRecord {
  total: number;
  killed: number;
  kill_ratio: number;
  threshold: number;
  survivors: { id: string; description: string }[];
  /** Survivors the manifest declares equivalent (verification.equivalent_mutants), left out of the kill ratio. */
  equivalent?: { id: string; description: string; reason: string }[];
  /** Mutants that survived because no test executes their lines on the reference: test-adequacy gaps. */
  uncovered?: { id: string; description: string }[];
  /** Test runs the step took (the fast path runs a mutant once, or twice to confirm a survivor). */
  runs?: number;
  /** Every mutant with its fate, in the order they were made (only when asked: --list-mutants, --mutants all). */
  fates?: MutantFateRow[];
}

/** One mutant and what became of it: killed (by `killer`, the first test that failed), survived, reached by no test, or declared equivalent. */
export interface MutantFateRow {
  id: string;
  description: string;
  fate: "killed" | "survived" | "uncovered" | "equivalent";
  killer?: string;
  /** For an equivalent mutant: the manifest's reason. */
  reason?: string;
}

export interface LeaksStep extends StepRecord {
  leaks: Leak[];
  /** What the bundle took out of the workspace before the scan (bytecode, .git, copies of a target, workspace.remove). */
  removed?: RemovedEntry[];
  /** Other tasks whose references the workspace was scanned against (same upstream). */
  siblings?: string[];
  /** Not counted as leaks, listed for a reviewer: definitions elsewhere with a target's name. */
  review?: ReviewItem[];
}

/** A definition in another workspace file that shares a target's name: maybe another implementation. */
export interface ReviewItem {
  file: string;
  line: number;
  name: string;
  target: string;
}

/** One alternative's run, summarized as a run of the reference is. */
export interface AlternativeOutcome extends Omit<RunSummary, "status"> {
  name: string;
  /** A run status, or "invalid" when the alternative lacks a target file. */
  status: RunStatus | "invalid";
}

export interface AlternativesStep extends StepRecord {
  min: number;
  alternatives: AlternativeOutcome[];
}

export interface EnvironmentStep extends StepRecord {
  /** Third-party modules the tree's and grader's code imported: installed, stand-in or missing. */
  modules: { module: string; origin: string; importer: string; dist?: string }[];
  problems?: string[];
}

export interface FixturesStep extends StepRecord {
  /** Fixture files regenerated and compared byte for byte. */
  files?: string[];
  /** The first difference, when there is one. */
  difference?: string;
}

/** `check`: the task is unsound; `infra`: the toolkit could not check it (interpreter, sandbox, network). */
type FailureKind = "check" | "infra";

/** tasks/<id>/verification.json: what `lmr verify` proved, against which inputs, where. */
export interface VerificationRecord {
  schema_version: number;
  task_id: string;
  ok: boolean;
  /** The first step that failed, and why. */
  failure?: { step: StepName; reason: string; kind: FailureKind };
  verified_at: string;
  toolkit_version: string;
  /** The toolkit build that made the record (src/core/toolkit-identity.ts): its grading code's hash. */
  toolkit_hash?: string;
  inputs: {
    /** Hash of task.json, instruction, paper text, tests and fixtures: changes when the task changes. */
    task: string;
    /** `tree`: hash of a local upstream folder used without a commit (its content is not pinned). */
    upstream: { location: string; commit: string | null; tree?: string };
    workspace?: string;
    reference?: string;
    grader?: string;
  };
  environment: {
    python: { path: string; version: string } | null;
    packages: Record<string, string>;
    backend: BackendName | null;
    /** backend docker: the image the runs used (tag, id, registry digest or null). */
    image?: ImageRecord;
    /**
     * What the task's fork servers preloaded (src/verify/server-plan.ts), as the passing reference
     * showed it. Not a claim: a later verify starts its servers from it where its cache has no plan
     * (a fresh clone, a cold cache) and checks it against run 1, falling back to a fresh run 1.
     */
    server_plan?: ServerPlan;
    platform: string;
    node: string;
  };
  /** mutants "all": every mutant the generator makes, no sample. */
  settings: { runs: number; mutants: number | "all"; min_kill_ratio: number; min_alternatives: number; seed: number };
  /** Per-step outcome, in the order the steps run. */
  steps: {
    manifest: StepRecord & { problems?: string[] };
    build: StepRecord;
    fixtures: FixturesStep;
    reference: RunsStep;
    environment: EnvironmentStep;
    stub: RunsStep;
    alternatives: AlternativesStep;
    mutants: MutantsStep;
    leaks: LeaksStep;
  };
  timings: { total_s: number };
  /** How much of the reference the instructions reveal (see src/verify/giveaway.ts); absent when the build failed. */
  giveaway?: GiveawayRecord;
}

export interface GiveawayRecord {
  /** The paper level (instruction.md): what the threshold applies to. */
  paper: GiveawayResult;
  /** The hinted level (hints.md), where the task has one: expected to be high. */
  hinted?: GiveawayResult;
  threshold: number;
}

/** A record whose every step is still to run (or, after an early failure, skipped). */
export function emptyRecord(
  taskId: string,
  settings: VerificationRecord["settings"],
  inputs: VerificationRecord["inputs"],
  toolkitVersion: string,
  toolkitHash: string,
): VerificationRecord {
  const skipped = (): StepRecord => ({ ok: false, skipped: true, reason: "not run: an earlier step failed", duration_s: 0 });
  return {
    schema_version: VERIFICATION_SCHEMA_VERSION,
    task_id: taskId,
    ok: false,
    verified_at: new Date().toISOString(),
    toolkit_version: toolkitVersion,
    toolkit_hash: toolkitHash,
    inputs,
    environment: { python: null, packages: {}, backend: null, platform: `${process.platform}-${process.arch}`, node: process.version },
    settings,
    steps: {
      manifest: skipped(),
      build: skipped(),
      fixtures: skipped(),
      reference: { ...skipped(), runs: [] },
      environment: { ...skipped(), modules: [] },
      stub: { ...skipped(), runs: [] },
      alternatives: { ...skipped(), min: 0, alternatives: [] },
      mutants: { ...skipped(), total: 0, killed: 0, kill_ratio: 0, threshold: settings.min_kill_ratio, survivors: [] },
      leaks: { ...skipped(), leaks: [] },
    },
    timings: { total_s: 0 },
  };
}

/** Marks the record ok or names its first failed step, and whether the failure is the task's or the toolkit's. */
export function settleRecord(record: VerificationRecord): VerificationRecord {
  const failed = STEP_NAMES.find((s) => !record.steps[s].ok);
  record.ok = failed === undefined;
  if (failed) {
    const step = record.steps[failed];
    record.failure = { step: failed, reason: step.reason ?? "failed", kind: step.infra ? "infra" : "check" };
  } else {
    delete record.failure;
  }
  return record;
}
