import { join } from "node:path";
import { formatProblem, isLmrError } from "../core/errors.js";
import { BUNDLE_FILES, scanWorkspace, type BundleInfo, type LeakReference } from "../bundle/index.js";
import type { ResolvedTask } from "../manifest/types.js";
import { validateTasks } from "../manifest/validate.js";
import { maskerFor } from "../mask/registry.js";
import type { RunOutcome, RunRequest } from "../runner/types.js";
import { runMutant, type MutantPlan } from "./mutant-runs.js";
import { judgeReference, judgeStub, type RunsJudgement } from "./judge-runs.js";
import { generateMutants, type Mutant, type MutantTarget } from "./mutants.js";
import { findSameNamedDefinitions } from "./review-names.js";
import type { RunSlots } from "./run-slots.js";
import type { FailingTest, LeaksStep, MutantFateRow, MutantsStep, RunSummary, RunsStep, StepRecord, VerificationRecord } from "./record.js";

/** Reports one finished unit of work: `done` of `total` (a run, a mutant). */
export type Tick = (done: number, total: number, what: string) => void;

const round = (x: number): number => Math.round(x * 1000) / 1000;
export const since = (t0: number): number => round((performance.now() - t0) / 1000);

export function errorText(err: unknown): string {
  return isLmrError(err) ? err.format() : err instanceof Error ? err.message : String(err);
}

/** Most failing tests a record lists per run, and how much of each message. */
const MAX_FAILING = 5;
const MAX_MESSAGE = 800;

/** The tests of a run that failed or errored, with the start of their messages (assertion text first). */
export function failingTests(o: RunOutcome): FailingTest[] {
  return o.tests
    .filter((t) => t.status === "failed" || t.status === "error")
    .slice(0, MAX_FAILING)
    .map((t) => ({ id: t.id, message: trimMessage(t.message ?? "") }));
}

/** pytest's short traceback ends with the `E   …` lines that say what failed: keep those first. */
function trimMessage(text: string): string {
  const lines = text.split("\n");
  const e = lines.filter((l) => /^E\s/.test(l)).map((l) => l.replace(/^E\s+/, ""));
  const body = e.length > 0 ? e.join("\n") : text.trim();
  return body.length <= MAX_MESSAGE ? body : `${body.slice(0, MAX_MESSAGE - 1)}…`;
}

function summarize(o: RunOutcome, withFailing: boolean): RunSummary {
  const failing = withFailing && o.status !== "passed" ? failingTests(o) : [];
  return {
    status: o.status,
    passed: o.counts.passed,
    failed: o.counts.failed,
    errors: o.counts.errors,
    duration_s: round(o.duration_s),
    ...(o.reason ? { reason: o.reason } : {}),
    ...(failing.length > 0 ? { failing } : {}),
  };
}

/** `finished: false` (a draft): the instruction may still hold TODO(author) markers. */
export async function checkManifestStep(task: ResolvedTask, opts: { finished?: boolean } = {}): Promise<StepRecord & { problems?: string[] }> {
  const t = performance.now();
  const report = await validateTasks([task.dir], { finished: opts.finished ?? true });
  if (report.ok) return { ok: true, duration_s: since(t) };
  const problems = report.problems.map(formatProblem);
  return { ok: false, reason: `${problems.length} manifest problem(s): ${problems[0]}`, problems, duration_s: since(t) };
}

/**
 * Runs the tests `n` times (at most `jobs` at once) and judges the outcomes as a
 * whole: flakiness shows only across runs. Returns the backend the runs used.
 */
export async function repeatRuns(
  kind: "reference" | "stub",
  n: number,
  limit: RunSlots,
  once: (i: number) => Promise<RunOutcome>,
  tick: Tick,
  /** Awaited before run i takes a slot (a run that needs something an earlier one makes). */
  ready: (i: number) => Promise<void> = () => Promise.resolve(),
): Promise<{ step: RunsStep; backend?: RunOutcome["backend"]; outcomes: RunOutcome[] }> {
  const t = performance.now();
  let done = 0;
  const outcomes = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      await ready(i);
      return limit(async () => {
        const o = await once(i);
        tick(++done, n, `${kind} run ${done}/${n} ${o.status}`);
        return o;
      });
    }),
  );
  const judged: RunsJudgement = kind === "reference" ? judgeReference(outcomes) : judgeStub(outcomes);
  const { infra, ...rest } = judged;
  const step: RunsStep = {
    ...rest,
    ...(infra ? { infra: true } : {}),
    duration_s: since(t),
    runs: outcomes.map((o) => summarize(o, kind === "reference")),
    ...(kind === "reference" ? gradedSet(outcomes) : {}),
  };
  return { step, outcomes, ...(outcomes[0] ? { backend: outcomes[0].backend } : {}) };
}

/** The tests a passing reference run ran (and skipped): the set every graded run must have. */
function gradedSet(outcomes: RunOutcome[]): Pick<RunsStep, "tests" | "skipped_tests"> {
  const passed = outcomes.find((o) => o.status === "passed");
  if (!passed) return {};
  const skipped = passed.tests
    .filter((t) => t.status === "skipped")
    .map((t) => t.id)
    .sort();
  return { tests: passed.tests.map((t) => t.id).sort(), ...(skipped.length > 0 ? { skipped_tests: skipped } : {}) };
}

/** Mutants of the reference bodies, each run once; a mutant that passes every test survives. */
export async function mutantsStep(
  task: ResolvedTask,
  references: Record<string, string>,
  settings: VerificationRecord["settings"],
  limit: RunSlots,
  runOverlay: (overlay: Record<string, string>, extra: Partial<RunRequest>) => Promise<RunOutcome>,
  tick: Tick,
  plan: MutantPlan = { killers: [], mount: "lmr_tests" },
  /** Also list every mutant with its fate (MutantsStep.fates). */
  listFates = false,
): Promise<MutantsStep> {
  const t = performance.now();
  const base = { total: 0, killed: 0, kill_ratio: 0, threshold: settings.min_kill_ratio, survivors: [] };
  if (settings.mutants === 0) return { ...base, ok: true, skipped: true, reason: "not asked for (mutants: 0)", duration_s: 0 };
  const files = Object.keys(references);
  const mutants: { file: string; mutant: Mutant }[] = [];
  for (const [i, file] of files.entries()) {
    const targets = await mutantTargets(task, file, references[file]!);
    // share the budget between files, the first ones taking the remainder
    const share =
      settings.mutants === "all" ? Number.MAX_SAFE_INTEGER : Math.floor(settings.mutants / files.length) + (i < settings.mutants % files.length ? 1 : 0);
    for (const mutant of await generateMutants(references[file]!, targets, { max: share, seed: settings.seed }, file)) mutants.push({ file, mutant });
  }
  let done = 0;
  // shared by the runs in flight, and left in `plan` for the caller to remember
  const killers = plan.killers;
  const results = await Promise.all(
    mutants.map(({ file, mutant }) =>
      limit(async () => {
        const r = await runMutant(file, mutant, { ...references, [file]: mutant.source }, plan, runOverlay);
        if (r.killer && !killers.includes(r.killer)) killers.push(r.killer);
        tick(++done, mutants.length, `mutant ${done}/${mutants.length} ${r.fate}`);
        return r;
      }),
    ),
  );
  const infra = results.find((r) => r.outcome.status === "infra")?.outcome;
  const listed = (fate: string) =>
    mutants.filter((_, i) => results[i]!.fate === fate).map(({ mutant }) => ({ id: mutant.id, description: mutant.description }));
  const declared = new Map((task.manifest.verification?.equivalent_mutants ?? []).map((e) => [e.id, e.reason]));
  const equivalent = [...listed("survived"), ...listed("uncovered")].filter((s) => declared.has(s.id)).map((s) => ({ ...s, reason: declared.get(s.id)! }));
  const survivors = listed("survived").filter((s) => !declared.has(s.id));
  const uncovered = listed("uncovered").filter((s) => !declared.has(s.id));
  const total = mutants.length;
  const killed = total - survivors.length - uncovered.length - equivalent.length;
  // a mutant that cannot change a result is no test's fault: it leaves the denominator, in plain sight
  const counted = total - equivalent.length;
  const ratio = counted === 0 ? 0 : round(killed / counted);
  const runs = results.reduce((n, r) => n + r.runs, 0);
  const fates: MutantFateRow[] = mutants.map(({ mutant }, i) => {
    const r = results[i]!;
    const row = { id: mutant.id, description: mutant.description };
    if (r.fate !== "killed" && declared.has(mutant.id)) return { ...row, fate: "equivalent", reason: declared.get(mutant.id)! };
    return { ...row, fate: r.fate, ...(r.killer ? { killer: r.killer } : {}) };
  });
  const result = {
    ...base,
    total,
    killed,
    kill_ratio: ratio,
    survivors,
    ...(equivalent.length > 0 ? { equivalent } : {}),
    ...(plan.coverage ? { uncovered, runs } : {}),
    ...(listFates ? { fates } : {}),
    duration_s: since(t),
  };
  if (infra) return { ...result, ok: false, infra: true, reason: `infra: a mutant run could not run (${infra.reason ?? "unknown"})` };
  if (total === 0) return { ...result, ok: false, reason: "no mutant could be made of the reference body (is it empty?)" };
  if (ratio < settings.min_kill_ratio) {
    const shown = [...survivors, ...uncovered.map((u) => ({ ...u, description: `${u.description} (no test reaches it)` }))]
      .slice(0, 3)
      .map((s) => s.description)
      .join("; ");
    return {
      ...result,
      ok: false,
      reason: `the tests kill ${killed}/${counted} mutants${equivalent.length ? ` (${equivalent.length} declared equivalent left out)` : ""} (ratio ${ratio}), below the threshold ${settings.min_kill_ratio}; survivors: ${shown}${survivors.length + uncovered.length > 3 ? "; …" : ""}`,
    };
  }
  return { ...result, ok: true };
}

/** Other tasks' references the workspace is scanned against too (dataset-wide scan). */
export interface SiblingScan {
  ids: string[];
  refs: LeakReference[];
}

/**
 * Copies of the reference left in the workspace the agent sees, and of the
 * references of sibling tasks over the same upstream; files in allowed_leaks
 * are shown, not counted. Same-named definitions elsewhere are listed for review.
 */
export async function leaksStep(
  task: ResolvedTask,
  bundle: BundleInfo,
  references: Record<string, string>,
  siblings: SiblingScan = { ids: [], refs: [] },
): Promise<LeaksStep> {
  const t = performance.now();
  const refs: LeakReference[] = [];
  for (const [file, source] of Object.entries(references)) {
    const specs = task.manifest.targets
      .filter((x) => x.file === file)
      .map((x) => ({ symbol: x.symbol, mode: x.mode, ...(x.line ? { line: x.line } : {}), ...(x.region ? { region: x.region } : {}) }));
    const masked = await maskerFor(file).mask(source, specs, file);
    refs.push({
      file,
      bodies: masked.targets.flatMap((x) => x.reference),
      targets: masked.targets.flatMap((x) => x.reference.map(() => `${file}::${x.symbol}`)),
    });
  }
  const allowed = (task.manifest.verification?.allowed_leaks ?? []).map((a) => ({ file: a.file, ...(a.task ? { task: a.task } : {}) }));
  const workspace = join(bundle.dir, BUNDLE_FILES.workspace);
  const result = await scanWorkspace(workspace, [...refs, ...siblings.refs], { allowed });
  const counted = result.leaks.filter((l) => !l.allowed);
  const first = counted[0];
  const allowedCount = result.leaks.length - counted.length;
  const review = await findSameNamedDefinitions(workspace, task.manifest.targets);
  const fromSibling =
    first?.target?.includes(":") && !first.target.startsWith(`${first.file}::`) && siblings.ids.some((id) => first.target!.startsWith(`${id}:`));
  const fix = fromSibling
    ? "mask that symbol in this task too (workspace.mask, with the reason) or remove the file (workspace.remove)"
    : "remove it (workspace.remove, or a prepare step) or list the file in verification.allowed_leaks with a reason";
  return {
    ok: counted.length === 0,
    ...(first
      ? {
          reason: `${counted.length} leak(s) of ${fromSibling ? "another task's reference" : "the reference"} in the workspace; first: ${first.kind} in ${first.file}${first.line ? `:${first.line}` : ""}${first.target ? ` of ${first.target}` : ""} (${first.detail}); ${fix}`,
        }
      : allowedCount > 0
        ? { reason: `${allowedCount} allowed leak(s) (verification.allowed_leaks)` }
        : {}),
    leaks: result.leaks,
    ...(bundle.removed.length > 0 ? { removed: bundle.removed } : {}),
    ...(siblings.ids.length > 0 ? { siblings: siblings.ids } : {}),
    ...(review.items.length > 0 ? { review: review.items } : {}),
    duration_s: since(t),
  };
}

/** The targets of one file as the mutant generator takes them: a region target only inside its masked lines. */
async function mutantTargets(task: ResolvedTask, file: string, source: string): Promise<MutantTarget[]> {
  const out: MutantTarget[] = [];
  for (const x of task.manifest.targets.filter((t) => t.file === file)) {
    const target: MutantTarget = { symbol: x.symbol, ...(x.line ? { line: x.line } : {}) };
    if (x.mode === "region" && x.region) {
      const masked = await maskerFor(file).mask(source, [{ symbol: x.symbol, mode: x.mode, region: x.region, ...(x.line ? { line: x.line } : {}) }], file);
      const bytes = Buffer.from(source, "utf8");
      const offset = (b: number): number => bytes.subarray(0, b).toString("utf8").length;
      target.spans = masked.targets.flatMap((t) => t.byte_ranges.map(([s, e]): [number, number] => [offset(s), offset(e)]));
    }
    out.push(target);
  }
  return out;
}
