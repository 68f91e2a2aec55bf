import { findInTargets, formatLowPrecisionWarning } from "../record/low-precision.js";
import { claimDifferences, isReproducedHere, readRecordText, stampReproduced } from "./reproduced.js";
import { TOOLKIT_VERSION, toolkitHash } from "../core/toolkit-identity.js";
import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { makeTrustedScratch } from "../runner/trusted-scratch.js";
import { basename, join, posix, resolve } from "node:path";
import { promisify } from "node:util";
import { LmrError, formatProblem, type Problem } from "../core/errors.js";
import { writeJsonAtomic } from "../core/fs-atomic.js";
import { toolkitPath } from "../core/paths.js";
import { hashFile, hashTree, listFiles } from "../core/hash.js";
import { instructionPath } from "../manifest/level.js";
import { GIVEAWAY_THRESHOLD, scoreGiveaway } from "./giveaway.js";
import { buildBundle, hashTaskInputs, BUNDLE_FILES, type BundleInfo } from "../bundle/index.js";
import { isUrlUpstream, type ResolvedTask } from "../manifest/types.js";
import { dockerImageOf, runTests } from "../runner/index.js";
import type { PythonEnv, RunOutcome, RunRequest, SandboxChoice } from "../runner/types.js";
import type { SourceOptions } from "../source/types.js";
import { candidateRequest } from "../runner/candidate.js";
import { resolveRunTarget, type RunTarget } from "../runner/run-target.js";
import type { ForkServer } from "../runner/fork-server.js";
import { defaultCacheDir } from "../source/cache.js";
import { alternativesStep } from "./alternatives-step.js";
import { createRunSlots, type RunSlots } from "./run-slots.js";
import { readKillers, writeKillers, type MutantPlan } from "./mutant-runs.js";
import { environmentStep, findMissingModule, missingModuleReason } from "./environment-step.js";
import {
  emptyRecord,
  settleRecord,
  VERIFICATION_FILE,
  VERIFICATION_SCHEMA_VERSION,
  type AlternativesStep,
  type FixturesStep,
  type GiveawayRecord,
  type LeaksStep,
  type MutantsStep,
  type RunsStep,
  type StepName,
  type StepRecord,
  type VerificationRecord,
} from "./record.js";
import { referenceStep, type ReferenceStepResult } from "./reference-step.js";
import { committedPlanFor } from "./server-plan.js";
import type { SiblingReferences } from "./siblings.js";
import { checkManifestStep, errorText, leaksStep, mutantsStep, repeatRuns, since, type SiblingScan, type Tick } from "./steps.js";

const run = promisify(execFile);

export interface VerifyOptions extends SourceOptions {
  /** Reference and stub runs (default: the manifest's, else 3). */
  runs?: number;
  /** Mutants to try (default: the manifest's, else 20); 0 skips the step; "all": every mutant the generator makes. */
  mutants?: number | "all";
  /** A task still being written: the manifest step leaves out the finished-instruction check (TODO(author) markers). The caller does not write its record. */
  draft?: boolean;
  /** List every mutant with its fate in the mutants step (fates). */
  listMutants?: boolean;
  minKillRatio?: number;
  /** Alternatives that must exist and pass (default: the manifest's, else 2). */
  minAlternatives?: number;
  seed?: number;
  python?: string;
  sandbox?: SandboxChoice;
  /** Parallel test runs (reference, stub, alternative, mutant and fixture runs; default: 2). */
  jobs?: number;
  /** Run slots shared with other tasks verified at the same time (default: `jobs` slots of this task's own). */
  slots?: RunSlots;
  /** Verify even when verification.json says the same inputs were verified. */
  force?: boolean;
  /** Write verification.json into the task folder (default true). */
  write?: boolean;
  /**
   * Mutants the fast way (default): each runs only the tests that reach its lines, known killers
   * first, stopping at the first failure, and a survivor is confirmed on the whole suite. The kill
   * count and survivors are those of the old way (false: every mutant runs the whole suite).
   */
  fastMutants?: boolean;
  /**
   * Run the stub and the mutants in a fork server that imported the task's heavy modules once
   * (default true with fastMutants, never under docker). Alternatives always run as submissions do.
   */
  forkServer?: boolean;
  /** Keep the bundle and a tree to rerun the reference's tests by hand; the result says where and how. */
  keep?: boolean;
  /** Other tasks' references for the dataset-wide leak scan (built once per invocation). */
  siblings?: SiblingReferences;
  /** Regenerates the task's fixtures and compares them (the fixtures step); without it the step is skipped. */
  /** Given verify's bundle of the task, so the check need not build another. */
  checkFixtures?: (task: ResolvedTask, bundle?: BundleInfo) => Promise<FixturesStep>;
  onEvent?: (event: VerifyEvent) => void;
}

/** Progress: a step starting, or one of its units (run i/N, mutant i/K) finishing. */
export type VerifyEvent = { task: string; step: StepName; message: string; done?: number; total?: number };

export interface VerifyResult {
  record: VerificationRecord;
  /** True when an earlier record of the same inputs was reused (no --force). */
  unchanged: boolean;
  /** Why an earlier record was not reused, when there was one and no --force: what changed. */
  rerunReason?: string;
  /** The committed record was not reproduced on this machine before; this run did, and left its file as it was. */
  reproduced?: boolean;
  /** When the reused record was made or reproduced on this machine (with `unchanged`). */
  reproducedAt?: string;
  /** What the author should look at though nothing failed (low-precision code on the reference's path). */
  warnings?: string[];
  /** With `keep`: the bundle, a tree with the reference and the grader in place, and the command that runs the tests there. */
  kept?: KeptBundle;
}

interface KeptBundle {
  bundle: string;
  tree: string;
  command: string;
}

const DEFAULTS = { runs: 3, mutants: 20, minKillRatio: 0.8, minAlternatives: 2, seed: 1 } as const;

/** The settings a verification runs with: flags over the manifest's verification policy over defaults. */
function resolveSettings(
  policy: { runs?: number; mutants?: number | "all"; min_kill_ratio?: number; min_alternatives?: number },
  opts: VerifyOptions,
): VerificationRecord["settings"] {
  const s = {
    runs: opts.runs ?? policy.runs ?? DEFAULTS.runs,
    mutants: opts.mutants ?? policy.mutants ?? DEFAULTS.mutants,
    min_kill_ratio: opts.minKillRatio ?? policy.min_kill_ratio ?? DEFAULTS.minKillRatio,
    min_alternatives: opts.minAlternatives ?? policy.min_alternatives ?? DEFAULTS.minAlternatives,
    seed: opts.seed ?? DEFAULTS.seed,
  };
  const bad = (field: string, why: string): LmrError =>
    new LmrError({ code: "verify/bad-setting", message: `${field} ${why}`, hint: "e.g. --runs 3 --mutants 20 --min-kill-ratio 0.8" });
  if (!Number.isInteger(s.runs) || s.runs < 1) throw bad("runs", `must be a whole number >= 1, got ${s.runs}`);
  if (s.mutants !== "all" && (!Number.isInteger(s.mutants) || s.mutants < 0)) throw bad("mutants", `must be a whole number >= 0 or "all", got ${s.mutants}`);
  if (!(s.min_kill_ratio >= 0 && s.min_kill_ratio <= 1)) throw bad("min_kill_ratio", `must be between 0 and 1, got ${s.min_kill_ratio}`);
  if (!Number.isInteger(s.min_alternatives) || s.min_alternatives < 0) throw bad("min_alternatives", `must be a whole number >= 0, got ${s.min_alternatives}`);
  if (!Number.isInteger(s.seed)) throw bad("seed", `must be a whole number, got ${s.seed}`);
  return s;
}

/** The record of an earlier verification, if there is a readable one. */
export async function readVerification(task: ResolvedTask): Promise<VerificationRecord | undefined> {
  try {
    return JSON.parse(await readFile(join(task.dir, VERIFICATION_FILE), "utf8")) as VerificationRecord;
  } catch {
    return undefined;
  }
}

/**
 * Proves a task sound: manifest, build, reference passes N times, stub fails N
 * times inside a test, mutants of the reference are killed, no leak in the
 * workspace. Every failure is a value in the record, never an exception.
 *
 * A passing record is reused (`unchanged`) while the task inputs, the settings,
 * the toolkit version and (for a local upstream without a commit) the upstream
 * folder are the same; a URL upstream is pinned by the commit in task.json.
 * The Python environment is recorded but not compared: use --force after changing it.
 */
export async function verifyTask(task: ResolvedTask, opts: VerifyOptions = {}): Promise<VerifyResult> {
  const t0 = performance.now();
  const settings = resolveSettings(task.manifest.verification ?? {}, opts);
  const cacheDir = opts.cacheDir ?? defaultCacheDir();
  const hashes = { task: await hashTaskInputs(task).catch(() => "unreadable"), upstreamTree: await hashUnpinnedUpstream(task) };
  const earlier = opts.force ? {} : await checkEarlierRecord(task, settings, hashes, cacheDir);
  if (earlier.reused) return earlier.reused;

  const record = emptyRecord(task.manifest.id, settings, initialInputs(task, hashes), TOOLKIT_VERSION, toolkitHash());
  const ctx: StepContext = {
    task,
    opts,
    settings,
    cacheDir,
    slots: opts.slots ?? createRunSlots(Math.max(1, opts.jobs ?? 2)),
    ...progressOf(task.manifest.id, opts.onEvent),
  };
  const ending: Ending = { t0, rerunReason: earlier.rerunReason, committed: earlier.committed, cacheDir, warnings: [] };
  // a kept bundle is for a person to use later: it stays on disk, not in memory
  const workDir = opts.keep ? await diskScratch("lmr-verify-") : await makeTrustedScratch("lmr-verify-");
  const held: Held = {};
  try {
    return await runSteps(ctx, record, workDir.dir, held, ending);
  } finally {
    await held.server?.close();
    if (!held.kept) await workDir.release();
  }
}

/** What one verification's steps share: the task, the options and settings, the run slots and the progress reporter. */
interface StepContext {
  task: ResolvedTask;
  opts: VerifyOptions;
  settings: VerificationRecord["settings"];
  cacheDir: string;
  slots: RunSlots;
  /** A step starting (with `done`/`total`: one of its units finishing). */
  emit: (step: StepName, message: string, done?: number, total?: number) => void;
  tick: (step: StepName) => Tick;
}

/** What outlives the steps until verifyTask's cleanup: the fork server it closes, and a bundle kept for a person. */
interface Held {
  server?: ForkServer;
  kept?: KeptBundle;
}

/** Runs the tests with files laid over the workspace. */
type RunOverlay = (overlay: Record<string, string>, extra?: Partial<RunRequest>) => Promise<RunOutcome>;

function progressOf(taskId: string, onEvent: VerifyOptions["onEvent"]): Pick<StepContext, "emit" | "tick"> {
  const emit = (step: StepName, message: string, done?: number, total?: number): void =>
    onEvent?.({ task: taskId, step, message, ...(done !== undefined && total !== undefined ? { done, total } : {}) });
  return { emit, tick: (step) => (done, total, what) => emit(step, what, done, total) };
}

/**
 * The steps in their order, each filling its part of `record`: manifest, build, fixtures
 * (beside the rest), reference, environment, then stub, alternatives with mutants, and the
 * leak scan side by side. A step that makes the rest meaningless ends the verification there.
 */
async function runSteps(ctx: StepContext, record: VerificationRecord, work: string, held: Held, ending: Ending): Promise<VerifyResult> {
  const { task, opts, settings } = ctx;
  const m = task.manifest;
  const end = (): Promise<VerifyResult> => finish(record, task, opts, ending);

  ctx.emit("manifest", "checking the manifest");
  record.steps.manifest = await checkManifestStep(task, { finished: !opts.draft });
  if (!record.steps.manifest.ok) return end();

  const built = await buildStep(ctx, work);
  record.steps.build = built.step;
  if (!built.bundle) return end();
  const bundle = built.bundle;
  record.giveaway = await scoreTaskGiveaway(task, bundle);
  ending.warnings.push(...(await lowPrecisionWarnings(task, bundle)));
  record.inputs = withBundleInputs(record.inputs, bundle);

  const fixtures = startFixturesStep(ctx, bundle);
  const endWithFixtures = async (): Promise<VerifyResult> => {
    record.steps.fixtures = await fixtures;
    return end();
  };

  const resolved = await resolveTarget(ctx);
  if ("failure" in resolved) {
    record.steps.reference = resolved.failure;
    return endWithFixtures();
  }
  const { target } = resolved;
  const python = target.python;
  await noteInterpreter(record.environment, task, python);

  const references = await readReferences(bundle);
  const base = { ...baseRequest(task, bundle, python, opts, work), target };
  const fresh: RunOverlay = (overlay, extra = {}) => runTests({ ...base, overlay, ...extra });
  // the Node harness traces no lines and has no fork server: its mutants run the whole suite
  const fast = opts.fastMutants !== false && m.tests.runner !== "node-test";
  ctx.emit("reference", `reference × ${settings.runs}`);
  const ref = await referenceStep({
    references,
    runs: settings.runs,
    slots: ctx.slots,
    base,
    environment: m.environment,
    fast,
    useServer: fast && opts.forkServer !== false,
    cacheDir: ctx.cacheDir,
    hashes: bundle.hashes,
    committedPlan: async () => committedPlanFor((await readVerification(task))?.environment, target),
    tick: ctx.tick("reference"),
  });
  const server = (held.server = ref.server);
  record.steps.reference = ref.step;
  if (ref.serverPlan) record.environment.server_plan = ref.serverPlan;
  await noteRunEnvironment(record.environment, task, ref);
  // run 1's imports: the fork server's children find the preloaded modules already imported
  const first = ref.outcomes[0];
  record.steps.environment = environmentStep(m.environment, first?.status === "passed" ? first : (ref.outcomes.find((o) => o.status === "passed") ?? first));

  // stub, alternatives, mutants and the leak scan are independent: they share the run slots
  const trusted: RunOverlay = (overlay, extra = {}) => (server ? server.run({ ...base, overlay, ...extra }) : fresh(overlay, extra));
  const stubKillers = fast ? (await readKillers(ctx.cacheDir, bundle.hashes.grader)).slice(0, 3) : [];
  await settleAll([
    stubStep(ctx, { trusted, fast, killers: stubKillers, referenceInfra: record.steps.reference.infra === true, python }).then((s) => (record.steps.stub = s)),
    (record.steps.reference.ok
      ? alternativesAndMutantsStep(ctx, { bundle, references, reference: ref, fast, fresh, trusted })
      : notRunWithoutReference(record.steps)
    ).then((s) => {
      record.steps.mutants = s.mutants;
      record.steps.alternatives = s.alternatives;
    }),
    leakScanStep(ctx, bundle, references).then((s) => (record.steps.leaks = s)),
    fixtures,
  ]);
  if (opts.keep) held.kept = await keepForHand(bundle, references, task, python);
  const done = await endWithFixtures();
  return held.kept ? { ...done, kept: held.kept } : done;
}

/**
 * The record of an earlier verification if it still stands for this one (`reused`), else why
 * not (`rerunReason`) and, for a valid record this machine has not reproduced yet (a fresh
 * clone's), that record as committed: a run that reproduces it leaves its file as it is.
 */
async function checkEarlierRecord(
  task: ResolvedTask,
  settings: VerificationRecord["settings"],
  hashes: InputHashes,
  cacheDir: string,
): Promise<{ reused?: VerifyResult; rerunReason?: string; committed?: Committed }> {
  const text = await readRecordText(join(task.dir, VERIFICATION_FILE));
  const prev = await readVerification(task);
  const rerunReason = prev ? staleReason(prev, hashes.task, settings, hashes.upstreamTree) : undefined;
  if (prev && text !== undefined && rerunReason === undefined) {
    const at = await isReproducedHere(cacheDir, text);
    if (at) return { reused: { record: prev, unchanged: true, reproducedAt: at } };
    // a record that came with the checkout is a claim until a run here reproduces it
    return { rerunReason: "the record has not been reproduced on this machine yet", committed: { record: prev, text } };
  }
  return { rerunReason };
}

/** The hashes an earlier record is compared on: the task's inputs and a local upstream that task.json does not pin. */
interface InputHashes {
  task: string;
  upstreamTree: string | undefined;
}

/** The record's inputs before the build: the task's hash and the upstream as task.json names it. */
function initialInputs(task: ResolvedTask, hashes: InputHashes): VerificationRecord["inputs"] {
  const u = task.manifest.upstream;
  return {
    task: hashes.task,
    upstream: { location: isUrlUpstream(u) ? u.repo : u.path, commit: u.commit ?? null, ...(hashes.upstreamTree ? { tree: hashes.upstreamTree } : {}) },
  };
}

/** The inputs with what the build resolved: the upstream's location and commit, and the bundle's hashes. */
function withBundleInputs(inputs: VerificationRecord["inputs"], bundle: BundleInfo): VerificationRecord["inputs"] {
  return {
    ...inputs,
    upstream: { ...inputs.upstream, location: bundle.upstream.location, commit: bundle.upstream.commit },
    workspace: bundle.hashes.workspace,
    reference: bundle.hashes.reference,
    grader: bundle.hashes.grader,
  };
}

/** The build step: the bundle (upstream, prepare steps, masking) in `work`. */
async function buildStep(ctx: StepContext, work: string): Promise<{ step: StepRecord; bundle?: BundleInfo }> {
  ctx.emit("build", "building the bundle (upstream, prepare steps, masking)");
  const tb = performance.now();
  try {
    const bundle = await buildBundle(ctx.task, work, ctx.opts);
    return { step: { ok: true, duration_s: since(tb) }, bundle };
  } catch (err) {
    // a task that cannot be built is unsound; a mirror or network that is not there is ours
    const infra = !(err instanceof LmrError) || err.kind === "infra";
    return { step: { ok: false, ...(infra ? { infra: true } : {}), reason: errorText(err), duration_s: since(tb) } };
  }
}

/** The fixtures step, started: it regenerates from its own checkout beside the test steps, in a slot of its own. */
function startFixturesStep(ctx: StepContext, bundle: BundleInfo): Promise<FixturesStep> {
  ctx.emit("fixtures", "regenerating the fixtures");
  const check = ctx.opts.checkFixtures;
  return check
    ? ctx.slots(() => check(ctx.task, bundle)).catch((err: unknown) => ({ ok: false, infra: true, reason: `infra: ${errorText(err)}`, duration_s: 0 }))
    : Promise.resolve({ ok: true, skipped: true, reason: "not checked (no fixture check configured)", duration_s: 0 });
}

/** Where the tests run; one that cannot be resolved is the reference step's infrastructure failure. */
async function resolveTarget(ctx: StepContext): Promise<{ target: RunTarget } | { failure: RunsStep }> {
  const { task, opts } = ctx;
  try {
    // under docker the image's interpreter: nothing is resolved or installed on the host
    return {
      target: await resolveRunTarget({
        sandbox: opts.sandbox ?? "auto",
        environment: task.manifest.environment,
        runner: task.manifest.tests.runner === "node-test" ? "node-test" : "pytest",
        ...(opts.python ? { python: opts.python } : {}),
        ...(opts.cacheDir ? { cacheDir: opts.cacheDir } : {}),
      }),
    };
  } catch (err) {
    return { failure: { ok: false, infra: true, reason: `infra: ${errorText(err)}`, duration_s: 0, runs: [] } };
  }
}

/** Every step settles before the bundle and the fork server go away, even when one throws; then the first that threw does. */
async function settleAll(steps: Promise<unknown>[]): Promise<void> {
  const settled = await Promise.allSettled(steps);
  const thrown = settled.find((x): x is PromiseRejectedResult => x.status === "rejected");
  if (thrown) throw thrown.reason;
}

/** What the author should look at though nothing fails: low-precision code on the reference's path. */
async function lowPrecisionWarnings(task: ResolvedTask, bundle: BundleInfo): Promise<string[]> {
  const low = formatLowPrecisionWarning(await findInTargets(task.manifest.targets, join(bundle.dir, BUNDLE_FILES.reference)));
  return low ? [low] : [];
}

/** The interpreter the tests run with and the versions of the packages the task requires (a node:test task runs with the Node that runs lmr: none). */
async function noteInterpreter(env: VerificationRecord["environment"], task: ResolvedTask, python: PythonEnv): Promise<void> {
  env.python = { path: python.path, version: python.version };
  env.packages = task.manifest.tests.runner === "node-test" ? {} : await packageVersions(python.path, ["pytest", ...task.manifest.environment.requirements]);
}

/** What the reference runs say of where they ran: the backend, a docker image, and the exact Node of a node:test task. */
async function noteRunEnvironment(env: VerificationRecord["environment"], task: ResolvedTask, ref: ReferenceStepResult): Promise<void> {
  const m = task.manifest;
  env.backend = ref.backend ?? null;
  if (ref.backend === "docker") env.image = await dockerImageOf(m.environment, m.tests.runner);
  // the image's Node says its exact version in each run's hello
  if (m.tests.runner === "node-test" && ref.outcomes[0]) env.python = { path: ref.outcomes[0].python.path, version: ref.outcomes[0].python.version };
}

/**
 * The stub step: the stub fails inside a test in every run. On the fast path a run stops at
 * the first such failure (known killers first); a stub that passes still runs every test.
 */
async function stubStep(
  ctx: StepContext,
  input: { trusted: RunOverlay; fast: boolean; killers: string[]; referenceInfra: boolean; python: PythonEnv },
): Promise<RunsStep> {
  ctx.emit("stub", `stub × ${ctx.settings.runs}`);
  const once = (): Promise<RunOutcome> => (input.fast ? input.trusted({}, { stopAtFirstFailure: true, firstTests: input.killers }) : input.trusted({}));
  const stub = await repeatRuns("stub", ctx.settings.runs, ctx.slots, once, ctx.tick("stub"));
  const missing = !stub.step.ok && input.referenceInfra ? findMissingModule(stub.outcomes) : undefined;
  return missing ? { ...stub.step, infra: true, reason: missingModuleReason(missing, input.python.path) } : stub.step;
}

/** The alternatives and mutants steps when the reference does not pass: not run. */
async function notRunWithoutReference(steps: VerificationRecord["steps"]): Promise<{ alternatives: AlternativesStep; mutants: MutantsStep }> {
  const reason = "not run: the reference does not pass";
  return { alternatives: { ...steps.alternatives, reason }, mutants: { ...steps.mutants, reason } };
}

/**
 * The alternatives step (each alternative passes, graded as a submission is) beside the mutants
 * step (mutants of the reference are killed). On the fast path the alternatives, which are ours
 * like the reference, run in the fork server too; each mutant runs the tests whose traced lines
 * it touches, known killers first, and the killers are remembered for the next verification.
 */
async function alternativesAndMutantsStep(
  ctx: StepContext,
  input: { bundle: BundleInfo; references: Record<string, string>; reference: ReferenceStepResult; fast: boolean; fresh: RunOverlay; trusted: RunOverlay },
): Promise<{ alternatives: AlternativesStep; mutants: MutantsStep }> {
  const { task, settings, slots, cacheDir } = ctx;
  const { bundle, fast, fresh, trusted } = input;
  const m = task.manifest;
  ctx.emit("alternatives", `${bundle.alternatives.length} alternative(s)`);
  const alternatives = alternativesStep(
    bundle,
    settings.min_alternatives,
    slots,
    (overlay) => (fast ? trusted(overlay) : fresh(overlay)),
    ctx.tick("alternatives"),
  );

  ctx.emit("mutants", settings.mutants === "all" ? "every mutant" : `up to ${settings.mutants} mutants`);
  // a mutant that loops forever is killed by its timeout: a few reference durations, not the task's whole budget
  const refTime = Math.max(...input.reference.step.runs.map((r) => r.duration_s), 1);
  const timeout = Math.min(m.tests.timeout_total_s, Math.max(10, Math.ceil(refTime * 5)));
  const tracedRun = fast ? input.reference.outcomes.find((o) => o.status === "passed" && o.lines) : undefined;
  const plan: MutantPlan = {
    killers: fast ? await readKillers(cacheDir, bundle.hashes.grader) : [],
    mount: m.tests.mount ?? "lmr_tests",
    ...(tracedRun?.lines ? { coverage: tracedRun.lines, tests: tracedRun.tests.map((x) => x.id) } : {}),
  };
  const mutants = await mutantsStep(
    task,
    input.references,
    settings,
    slots,
    (overlay, extra) => trusted(overlay, { timeoutTotalS: timeout, ...extra }),
    ctx.tick("mutants"),
    plan,
    ctx.opts.listMutants === true,
  );
  if (fast) await writeKillers(cacheDir, bundle.hashes.grader, plan.killers).catch(() => undefined);
  return { alternatives: await alternatives, mutants };
}

/** The leaks step: no copy of the reference in the workspace, nor of the references of tasks over the same upstream. */
async function leakScanStep(ctx: StepContext, bundle: BundleInfo, references: Record<string, string>): Promise<LeaksStep> {
  ctx.emit("leaks", "scanning the workspace");
  try {
    return await leaksStep(ctx.task, bundle, references, await siblingScan(ctx.task, ctx.opts.siblings));
  } catch (err) {
    return { ok: false, infra: true, reason: `infra: the leak scan failed: ${errorText(err)}`, leaks: [], duration_s: 0 };
  }
}

/** A folder in the system's temp folder, for a bundle that --keep may leave for a person. */
async function diskScratch(prefix: string): Promise<{ dir: string; release: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, release: () => rm(dir, { recursive: true, force: true }) };
}

/** References of the tasks over the same upstream, named by task, for the dataset-wide leak scan. */
async function siblingScan(task: ResolvedTask, siblings: SiblingReferences | undefined): Promise<SiblingScan> {
  if (!siblings) return { ids: [], refs: [] };
  const others = await siblings.siblingsOf(task);
  const refs: SiblingScan["refs"] = [];
  for (const other of others) refs.push(...(await siblings.referencesOf(other)));
  return { ids: others.map((o) => o.manifest.id), refs };
}

/**
 * A tree a contributor can run the tests in by hand: the workspace with the
 * reference files and the grader in place, as a reference run sees it.
 */
async function keepForHand(bundle: BundleInfo, references: Record<string, string>, task: ResolvedTask, python: PythonEnv): Promise<KeptBundle> {
  const tree = join(bundle.dir, "by-hand");
  const mount = task.manifest.tests.mount ?? "lmr_tests";
  await cp(join(bundle.dir, BUNDLE_FILES.workspace), tree, { recursive: true });
  for (const [file, text] of Object.entries(references)) await writeFile(join(tree, file), text);
  await cp(join(bundle.dir, BUNDLE_FILES.grader), join(tree, mount), { recursive: true });
  const args = [...(task.manifest.tests.pytest_args ?? [])].map((a) => JSON.stringify(a)).join(" ");
  // an interpreter that lives in a task image runs there: the tree goes in as the container's working folder
  if (task.manifest.tests.runner === "node-test") {
    // by hand, Node's own runner over the grader files (the TypeScript hooks without lmr's channel or bridge)
    const files = task.manifest.tests.files.map((f) => JSON.stringify(`${mount}/${f}`)).join(" ");
    return {
      bundle: bundle.dir,
      tree,
      command: `cd ${JSON.stringify(tree)} && ${python.path} --import ${JSON.stringify(toolkitPath("node", "lmr-harness", "ts-register.mjs"))} --test ${files}`,
    };
  }
  // the tests reach the code through a candidate process, as in lmr's runs (python/lmr_bridge/by_hand.py starts it)
  const c = task.manifest.tests.candidate;
  const setup = c?.setup ? ` --setup ${JSON.stringify(`${mount}/${c.setup}`)}` : "";
  const support = c?.setup || c?.files?.length ? ` --support ${JSON.stringify(`${mount}/${posix.dirname(c.setup ?? c.files![0]!)}`)}` : "";
  const byHand = (py: string, toolkit: string): string =>
    `${py} ${toolkit}/lmr_bridge/by_hand.py --tree .${support}${setup} -- ${args ? `${args} ` : ""}${mount}`;
  const image = (python as { image?: { tag: string } }).image;
  const command = image
    ? `docker run --rm --network none --user "$(id -u):$(id -g)" -v ${JSON.stringify(`${tree}:/work`)} -w /work ${image.tag} ${byHand(python.path, "/opt/lmr/python")}`
    : `cd ${JSON.stringify(tree)} && ${byHand(python.path, toolkitPath("python"))}`;
  return { bundle: bundle.dir, tree, command };
}

/**
 * The record of a task whose manifest is invalid: only the manifest step ran.
 * Never written to the task folder (the task's id and policy cannot be trusted).
 */
export async function recordInvalidManifest(dir: string, rawId: unknown, problems: Problem[], opts: VerifyOptions = {}): Promise<VerificationRecord> {
  const id = typeof rawId === "string" && rawId !== "" ? rawId : basename(resolve(dir));
  const settings = resolveSettings({}, opts);
  const hash = await hashFile(join(dir, "task.json")).catch(() => "unreadable");
  const record = emptyRecord(id, settings, { task: hash, upstream: { location: "", commit: null } }, TOOLKIT_VERSION, toolkitHash());
  const lines = problems.map(formatProblem);
  record.steps.manifest = { ok: false, reason: `${lines.length} manifest problem(s): ${lines[0] ?? "invalid"}`, problems: lines, duration_s: 0 };
  return settleRecord(record);
}

/** Why an earlier record cannot stand for a verification today, or undefined where it can. */
function staleReason(
  prev: VerificationRecord,
  taskHash: string,
  settings: VerificationRecord["settings"],
  upstreamTree: string | undefined,
): string | undefined {
  const s = prev.settings;
  if (prev.ok !== true) return "the last record did not pass";
  if (prev.schema_version !== VERIFICATION_SCHEMA_VERSION)
    return `the record's schema version is ${prev.schema_version}, this toolkit writes ${VERIFICATION_SCHEMA_VERSION}`;
  if (prev.toolkit_version !== TOOLKIT_VERSION) return `the record was made by lmr ${prev.toolkit_version}, this is ${TOOLKIT_VERSION}`;
  if (prev.toolkit_hash !== toolkitHash()) {
    return prev.toolkit_hash === undefined
      ? "the record names no toolkit build (made before records carried one)"
      : `the toolkit's grading code changed since the record (harness, bridge, masker, runner or verify: ${prev.toolkit_hash.slice(0, 12)} then, ${toolkitHash().slice(0, 12)} now)`;
  }
  if (prev.inputs?.task !== taskHash) return "the task's files changed since the record";
  if (prev.inputs.upstream?.tree !== upstreamTree) return "the local upstream's files changed since the record";
  if (
    !s ||
    s.runs !== settings.runs ||
    s.mutants !== settings.mutants ||
    s.min_kill_ratio !== settings.min_kill_ratio ||
    s.min_alternatives !== settings.min_alternatives ||
    s.seed !== settings.seed
  ) {
    return "the verification settings changed since the record";
  }
  return undefined;
}

/** Hash of a local upstream folder that task.json does not pin to a commit (caches and bytecode left out). */
async function hashUnpinnedUpstream(task: ResolvedTask): Promise<string | undefined> {
  const u = task.manifest.upstream;
  if (isUrlUpstream(u) || u.commit !== undefined) return undefined;
  const root = resolve(task.dir, u.path, u.subdir ?? "");
  const junk = (rel: string, isDir: boolean): boolean => {
    const name = rel.slice(rel.lastIndexOf("/") + 1);
    return isDir ? name === "__pycache__" || name === ".pytest_cache" || name === ".git" : /\.py[co]$/.test(name);
  };
  try {
    return (await hashTree(root, await listFiles(root, junk))).hash;
  } catch {
    return "unreadable";
  }
}

function baseRequest(
  task: ResolvedTask,
  bundle: BundleInfo,
  python: PythonEnv,
  opts: VerifyOptions,
  scratchParent: string,
): RunRequest & { scratchParent: string } {
  const t = task.manifest.tests;
  return {
    tree: join(bundle.dir, BUNDLE_FILES.workspace),
    grader: join(bundle.dir, BUNDLE_FILES.grader),
    scratchParent,
    ...(t.mount ? { mount: t.mount } : {}),
    python,
    sandbox: opts.sandbox ?? "auto",
    timeoutTotalS: t.timeout_total_s,
    timeoutPerTestS: t.timeout_per_test_s,
    network: task.manifest.environment.network,
    environment: task.manifest.environment,
    ...(t.pytest_args ? { pytestArgs: t.pytest_args } : {}),
    ...(t.runner === "node-test" ? { testRunner: "node-test" as const } : {}),
    ...candidateRequest(task.manifest),
    // the bundle holds the reference, the task folder the tests' sources: neither is visible to the code under test
    hidePaths: [bundle.dir, task.dir],
  };
}

/** Reference target files by workspace-relative path. */
/** The giveaway score of each instruction level against the reference bodies of the targets. */
async function scoreTaskGiveaway(task: ResolvedTask, bundle: BundleInfo): Promise<GiveawayRecord> {
  const files = await readReferences(bundle);
  const bodies = bundle.targets.map((t) =>
    files[t.file]!.split("\n")
      .slice(t.start_line - 1, t.end_line)
      .join("\n"),
  );
  const paper = scoreGiveaway(bodies, await readFile(instructionPath(task, "paper"), "utf8"));
  const hinted = task.manifest.hints === undefined ? undefined : scoreGiveaway(bodies, await readFile(instructionPath(task, "hinted"), "utf8"));
  return { paper, ...(hinted ? { hinted } : {}), threshold: GIVEAWAY_THRESHOLD };
}

async function readReferences(bundle: BundleInfo): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const file of new Set(bundle.targets.map((t) => t.file))) {
    out[file] = await readFile(join(bundle.dir, BUNDLE_FILES.reference, file), "utf8");
  }
  return out;
}

/** Versions by interpreter and names: tasks of one environment ask the same question. */
const versionsAsked = new Map<string, Promise<Record<string, string>>>();

function packageVersions(python: string, requirements: string[]): Promise<Record<string, string>> {
  const names = [...new Set(requirements.map((r) => r.split(/[<>=!~[; ]/)[0]!.trim()).filter(Boolean))];
  const key = JSON.stringify([python, names]);
  const asked = versionsAsked.get(key) ?? askVersions(python, names);
  versionsAsked.set(key, asked);
  return asked.then((v) => {
    // an interpreter that could not answer is asked again next time
    if (Object.keys(v).length === 0) versionsAsked.delete(key);
    return { ...v };
  });
}

async function askVersions(python: string, names: string[]): Promise<Record<string, string>> {
  const code =
    "import json,sys\nfrom importlib import metadata as m\nout={}\nfor n in sys.argv[1:]:\n  try: out[n]=m.version(n)\n  except Exception: out[n]='missing'\nprint(json.dumps(out))";
  try {
    const { stdout } = await run(python, ["-c", code, ...names], { timeout: 30_000 });
    return JSON.parse(stdout) as Record<string, string>;
  } catch {
    return {};
  }
}

/** A committed record that was valid but not yet reproduced here: the file, as read. */
interface Committed {
  record: VerificationRecord;
  text: string;
}

/** How a verification ends: when it started, why it ran, a committed record it may reproduce, and its warnings. */
interface Ending {
  t0: number;
  rerunReason?: string | undefined;
  committed?: Committed | undefined;
  cacheDir: string;
  warnings: string[];
}

async function finish(record: VerificationRecord, task: ResolvedTask, opts: VerifyOptions, ctx: Ending): Promise<VerifyResult> {
  settleRecord(record);
  record.timings.total_s = since(ctx.t0);
  const why = { ...(ctx.rerunReason ? { rerunReason: ctx.rerunReason } : {}), ...(ctx.warnings.length > 0 ? { warnings: ctx.warnings } : {}) };
  if (opts.draft) return { record, unchanged: false, ...why };
  // a run that reproduces every claim of the committed record leaves its file as it is (no churn
  // in a fresh clone) and stamps it as reproduced here
  if (ctx.committed && record.ok && claimDifferences(ctx.committed.record, record).length === 0) {
    await stampReproduced(ctx.cacheDir, ctx.committed.text);
    return { record: ctx.committed.record, unchanged: false, reproduced: true, ...why };
  }
  // a draft's record is never written: it was not checked as a finished task
  if (opts.write !== false && record.steps.manifest.ok) {
    const file = join(task.dir, VERIFICATION_FILE);
    await writeJsonAtomic(file, record);
    if (record.ok) {
      const text = await readRecordText(file);
      if (text !== undefined) await stampReproduced(ctx.cacheDir, text);
    }
  }
  return { record, unchanged: false, ...why };
}
