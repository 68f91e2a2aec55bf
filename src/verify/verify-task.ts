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
import { dockerImageOf, resolveRunNode, resolveRunPython, runTests } from "../runner/index.js";
import type { PythonEnv, RunOutcome, RunRequest, SandboxChoice } from "../runner/types.js";
import type { SourceOptions } from "../source/types.js";
import { candidateRequest } from "../runner/candidate.js";
import { resolveRunTarget, targetIdentity, type RunTarget } from "../runner/run-target.js";
import { ForkServer } from "../runner/fork-server.js";
import { parseServerPlan, planInServer, planOf, readServerPlan, samePlan, serverPlanKey, writeServerPlan, type ServerPlan } from "./server-plan.js";
import { defaultCacheDir } from "../source/cache.js";
import { alternativesStep } from "./alternatives-step.js";
import { createRunSlots, type RunSlots } from "./run-slots.js";
import { readKillers, writeKillers, type MutantPlan } from "./mutant-runs.js";
import { environmentStep, findMissingModule, missingModuleReason } from "./environment-step.js";
import { emptyRecord, settleRecord, VERIFICATION_FILE, VERIFICATION_SCHEMA_VERSION, type FixturesStep, type GiveawayRecord, type RunsStep, type StepName, type VerificationRecord } from "./record.js";
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

export interface KeptBundle {
  bundle: string;
  tree: string;
  command: string;
}

export const DEFAULTS = { runs: 3, mutants: 20, minKillRatio: 0.8, minAlternatives: 2, seed: 1 } as const;

/** The settings a verification runs with: flags over the manifest's verification policy over defaults. */
export function resolveSettings(policy: { runs?: number; mutants?: number | "all"; min_kill_ratio?: number; min_alternatives?: number }, opts: VerifyOptions): VerificationRecord["settings"] {
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
  const m = task.manifest;
  const settings = resolveSettings(m.verification ?? {}, opts);
  const emit = (step: StepName, message: string, done?: number, total?: number): void =>
    opts.onEvent?.({ task: m.id, step, message, ...(done !== undefined && total !== undefined ? { done, total } : {}) });
  const tick = (step: StepName): Tick => (done, total, what) => emit(step, what, done, total);
  const taskHash = await hashTaskInputs(task).catch(() => "unreadable");
  const upstreamTree = await hashUnpinnedUpstream(task);

  let rerunReason: string | undefined;
  let committed: Committed | undefined;
  const warnings: string[] = [];
  const cacheRoot = opts.cacheDir ?? defaultCacheDir();
  if (!opts.force) {
    const text = await readRecordText(join(task.dir, VERIFICATION_FILE));
    const prev = await readVerification(task);
    rerunReason = prev ? staleReason(prev, taskHash, settings, upstreamTree) : undefined;
    if (prev && text !== undefined && rerunReason === undefined) {
      const at = await isReproducedHere(cacheRoot, text);
      if (at) return { record: prev, unchanged: true, reproducedAt: at };
      // a record that came with the checkout is a claim until a run here reproduces it
      rerunReason = "the record has not been reproduced on this machine yet";
      committed = { record: prev, text };
    }
  }

  const u = m.upstream;
  const record = emptyRecord(m.id, settings, {
    task: taskHash,
    upstream: { location: isUrlUpstream(u) ? u.repo : u.path, commit: u.commit ?? null, ...(upstreamTree ? { tree: upstreamTree } : {}) },
  }, TOOLKIT_VERSION, toolkitHash());
  const slots = opts.slots ?? createRunSlots(Math.max(1, opts.jobs ?? 2));

  // a kept bundle is for a person to use later: it stays on disk, not in memory
  const workDir = opts.keep ? await diskScratch("lmr-verify-") : await makeTrustedScratch("lmr-verify-");
  const work = workDir.dir;
  let kept: KeptBundle | undefined;
  let server: ForkServer | undefined;
  try {
    emit("manifest", "checking the manifest");
    record.steps.manifest = await checkManifestStep(task, { finished: !opts.draft });
    if (!record.steps.manifest.ok) return await finish(record, task, opts, t0, { rerunReason, committed, cacheDir: cacheRoot, warnings });

    emit("build", "building the bundle (upstream, prepare steps, masking)");
    const tb = performance.now();
    let bundle: BundleInfo;
    try {
      bundle = await buildBundle(task, work, opts);
    } catch (err) {
      // a task that cannot be built is unsound; a mirror or network that is not there is ours
      const infra = !(err instanceof LmrError) || err.kind === "infra";
      record.steps.build = { ok: false, ...(infra ? { infra: true } : {}), reason: errorText(err), duration_s: since(tb) };
      return await finish(record, task, opts, t0, { rerunReason, committed, cacheDir: cacheRoot, warnings });
    }
    record.steps.build = { ok: true, duration_s: since(tb) };
    record.giveaway = await scoreTaskGiveaway(task, bundle);
    const low = formatLowPrecisionWarning(await findInTargets(m.targets, join(bundle.dir, BUNDLE_FILES.reference)));
    if (low) warnings.push(low);
    record.inputs.upstream = { ...record.inputs.upstream, location: bundle.upstream.location, commit: bundle.upstream.commit };
    record.inputs.workspace = bundle.hashes.workspace;
    record.inputs.reference = bundle.hashes.reference;
    record.inputs.grader = bundle.hashes.grader;

    // the fixtures regenerate from their own checkout: that runs beside the test steps, in a slot of its own
    emit("fixtures", "regenerating the fixtures");
    const check = opts.checkFixtures;
    const fixtures: Promise<FixturesStep> = check
      ? slots(() => check(task, bundle)).catch((err: unknown) => ({ ok: false, infra: true, reason: `infra: ${errorText(err)}`, duration_s: 0 }))
      : Promise.resolve({ ok: true, skipped: true, reason: "not checked (no fixture check configured)", duration_s: 0 });
    const withFixtures = async (): Promise<VerifyResult> => {
      record.steps.fixtures = await fixtures;
      return finish(record, task, opts, t0, { rerunReason, committed, cacheDir: cacheRoot, warnings });
    };

    // a node:test task runs with the Node that runs lmr: there is no interpreter to resolve
    const node = m.tests.runner === "node-test";
    let python: PythonEnv;
    let target: RunTarget;
    try {
      // under docker the image's interpreter: nothing is resolved or installed on the host
      target = await resolveRunTarget({ sandbox: opts.sandbox ?? "auto", environment: m.environment, runner: node ? "node-test" : "pytest", ...(opts.python ? { python: opts.python } : {}), ...(opts.cacheDir ? { cacheDir: opts.cacheDir } : {}) });
      python = target.python;
    } catch (err) {
      record.steps.reference = { ok: false, infra: true, reason: `infra: ${errorText(err)}`, duration_s: 0, runs: [] };
      return await withFixtures();
    }
    record.environment.python = { path: python.path, version: python.version };
    record.environment.packages = node ? {} : await packageVersions(python.path, ["pytest", ...m.environment.requirements]);

    const references = await readReferences(bundle);
    const base = { ...baseRequest(task, bundle, python, opts, work), target };
    const runWith = (overlay: Record<string, string>, extra: Partial<RunRequest> = {}): Promise<RunOutcome> => runTests({ ...base, overlay, ...extra });

    emit("reference", `reference × ${settings.runs}`);
    // the Node harness traces no lines and has no fork server: its mutants run the whole suite
    const fast = opts.fastMutants !== false && !node;
    // Reference run 1 also reports the imports (the environment step, and what a fork server
    // should preload) and, on the fast path, traces which target lines each test executes (a
    // mutant then runs only where it can be killed). The reference is our code: its other runs
    // go to the fork server started from run 1's imports, where there is one. Run 1 is a fresh
    // process unless the server plan those imports gave is remembered for these very inputs:
    // then the server starts at once and run 1 runs in it; a plan that no longer holds, or a
    // run 1 that does not pass there, falls back to the fresh run.
    let serverStarted: (() => void) | undefined;
    const serverReady = new Promise<void>((r) => (serverStarted = r));
    const cacheDir = opts.cacheDir ?? defaultCacheDir();
    const useServer = fast && opts.forkServer !== false;
    const planKey = serverPlanKey({ workspace: bundle.hashes.workspace, reference: bundle.hashes.reference, grader: bundle.hashes.grader, python: python.path, pythonVersion: python.version, sandbox: JSON.stringify(targetIdentity(target)), environment: m.environment });
    const traced = fast ? { traceLines: Object.keys(references) } : {};
    const startServer = (plan: ServerPlan): Promise<ForkServer | undefined> =>
      ForkServer.start({ scratchParent: work, python, sandbox: opts.sandbox ?? "auto", target, ...plan, network: m.environment.network, environment: m.environment, ...(base.memoryMb ? { memoryMb: base.memoryMb } : {}), ...(base.maxProcs ? { maxProcs: base.maxProcs } : {}) });
    // a cold cache (a fresh clone, a CI machine) starts from the plan the committed record carries
    const committedPlan = async (): Promise<ServerPlan | undefined> => parseServerPlan((await readVerification(task))?.environment?.server_plan);
    let planSource: RunsStep["plan_source"];
    const firstInRememberedServer = async (): Promise<RunOutcome | undefined> => {
      const cached = useServer ? await readServerPlan(cacheDir, planKey) : undefined;
      const remembered = cached ?? (useServer ? await committedPlan() : undefined);
      const early = remembered && (await startServer(remembered));
      if (!remembered || !early) return undefined;
      const first = await early.run({ ...base, overlay: references, reportImports: true, ...traced });
      if (first.status === "passed" && samePlan(planInServer(first, remembered), remembered)) {
        server = early;
        record.environment.server_plan = remembered;
        planSource = cached ? "cache" : "record";
        if (!cached) await writeServerPlan(cacheDir, planKey, remembered).catch(() => undefined);
        return first;
      }
      await early.close();
      return undefined;
    };
    const refRun = async (i: number): Promise<RunOutcome> => {
      if (i === 0) {
        try {
          const inServer = await firstInRememberedServer();
          if (inServer) return inServer;
          const first = await runWith(references, { reportImports: true, ...traced });
          if (useServer) {
            const plan = planOf(first);
            server = await startServer(plan);
            if (server) planSource = "first-run";
            if (first.status === "passed") {
              record.environment.server_plan = plan;
              await writeServerPlan(cacheDir, planKey, plan).catch(() => undefined);
            }
          }
          return first;
        } finally {
          serverStarted!();
        }
      }
      return server ? server.run({ ...base, overlay: references }) : runWith(references, { reportImports: true });
    };
    const ref = await repeatRuns("reference", settings.runs, slots, refRun, tick("reference"), (i) => (i === 0 ? Promise.resolve() : serverReady));
    record.steps.reference = { ...ref.step, ...(planSource ? { plan_source: planSource } : {}) };
    record.environment.backend = ref.backend ?? null;
    if (ref.backend === "docker") record.environment.image = await dockerImageOf(m.environment, m.tests.runner);
    // the image's Node says its exact version in each run's hello
    if (node && ref.outcomes[0]) record.environment.python = { path: ref.outcomes[0].python.path, version: ref.outcomes[0].python.version };
    if (!ref.step.ok && !ref.step.infra) {
      // a reference that fails because a module is missing says nothing about the task
      const missing = findMissingModule(ref.outcomes);
      if (missing) record.steps.reference = { ...ref.step, infra: true, reason: missingModuleReason(missing, python.path) };
    }
    // run 1's imports: the fork server's children find the preloaded modules already imported
    const first = ref.outcomes[0];
    record.steps.environment = environmentStep(m.environment, first?.status === "passed" ? first : (ref.outcomes.find((o) => o.status === "passed") ?? first));

    const runTrusted = (overlay: Record<string, string>, extra: Partial<RunRequest> = {}): Promise<RunOutcome> =>
      server ? server.run({ ...base, overlay, ...extra }) : runWith(overlay, extra);

    // stub, alternatives, mutants and the leak scan are independent: they share the run slots
    const stubKillers = fast ? (await readKillers(opts.cacheDir ?? defaultCacheDir(), bundle.hashes.grader)).slice(0, 3) : [];
    emit("stub", `stub × ${settings.runs}`);
    // the stub step proves the stub fails inside a test: on the fast path a run stops at the first
    // such failure (known killers first); a stub that passes still runs every test
    const stubRun = (): Promise<RunOutcome> => (fast ? runTrusted({}, { stopAtFirstFailure: true, firstTests: stubKillers }) : runTrusted({}));
    const stubStep = repeatRuns("stub", settings.runs, slots, stubRun, tick("stub")).then((stub) => {
      record.steps.stub = stub.step;
      const stubMissing = !stub.step.ok && record.steps.reference.infra ? findMissingModule(stub.outcomes) : undefined;
      if (stubMissing) record.steps.stub = { ...stub.step, infra: true, reason: missingModuleReason(stubMissing, python.path) };
    });

    const gradingSteps = async (): Promise<void> => {
      if (!record.steps.reference.ok) {
        record.steps.alternatives = { ...record.steps.alternatives, reason: "not run: the reference does not pass" };
        record.steps.mutants = { ...record.steps.mutants, reason: "not run: the reference does not pass" };
        return;
      }
      emit("alternatives", `${bundle.alternatives.length} alternative(s)`);
      // alternatives are ours, like the reference: on the fast path they run in the fork server too
      const alternatives = alternativesStep(bundle, settings.min_alternatives, slots, (overlay) => (fast ? runTrusted(overlay) : runWith(overlay)), tick("alternatives"));

      emit("mutants", settings.mutants === "all" ? "every mutant" : `up to ${settings.mutants} mutants`);
      // a mutant that loops forever is killed by its timeout: a few reference durations, not the task's whole budget
      const refTime = Math.max(...record.steps.reference.runs.map((r) => r.duration_s), 1);
      const timeout = Math.min(m.tests.timeout_total_s, Math.max(10, Math.ceil(refTime * 5)));
      const tracedRun = fast ? ref.outcomes.find((o) => o.status === "passed" && o.lines) : undefined;
      const plan: MutantPlan = { killers: fast ? await readKillers(cacheDir, bundle.hashes.grader) : [], mount: m.tests.mount ?? "lmr_tests", ...(tracedRun?.lines ? { coverage: tracedRun.lines, tests: tracedRun.tests.map((x) => x.id) } : {}) };
      record.steps.mutants = await mutantsStep(task, references, settings, slots, (overlay, extra) => runTrusted(overlay, { timeoutTotalS: timeout, ...extra }), tick("mutants"), plan, opts.listMutants === true);
      if (fast) await writeKillers(cacheDir, bundle.hashes.grader, plan.killers).catch(() => undefined);
      record.steps.alternatives = await alternatives;
    };

    const leakScan = async (): Promise<void> => {
      emit("leaks", "scanning the workspace");
      try {
        record.steps.leaks = await leaksStep(task, bundle, references, await siblingScan(task, opts.siblings));
      } catch (err) {
        record.steps.leaks = { ok: false, infra: true, reason: `infra: the leak scan failed: ${errorText(err)}`, leaks: [], duration_s: 0 };
      }
    };

    // every step settles before the bundle and the fork server go away, even when one throws
    const settled = await Promise.allSettled([stubStep, gradingSteps(), leakScan(), fixtures]);
    const thrown = settled.find((x): x is PromiseRejectedResult => x.status === "rejected");
    if (thrown) throw thrown.reason;
    if (opts.keep) kept = await keepForHand(bundle, references, task, python);
    const done = await withFixtures();
    return kept ? { ...done, kept } : done;
  } finally {
    await server?.close();
    if (!kept) await workDir.release();
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
    return { bundle: bundle.dir, tree, command: `cd ${JSON.stringify(tree)} && ${python.path} --import ${JSON.stringify(toolkitPath("node", "lmr-harness", "ts-register.mjs"))} --test ${files}` };
  }
  // the tests reach the code through a candidate process, as in lmr's runs (python/lmr_bridge/by_hand.py starts it)
  const c = task.manifest.tests.candidate;
  const setup = c?.setup ? ` --setup ${JSON.stringify(`${mount}/${c.setup}`)}` : "";
  const support = c?.setup || c?.files?.length ? ` --support ${JSON.stringify(`${mount}/${posix.dirname(c.setup ?? c.files![0]!)}`)}` : "";
  const byHand = (py: string, toolkit: string): string => `${py} ${toolkit}/lmr_bridge/by_hand.py --tree .${support}${setup} -- ${args ? `${args} ` : ""}${mount}`;
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
function staleReason(prev: VerificationRecord, taskHash: string, settings: VerificationRecord["settings"], upstreamTree: string | undefined): string | undefined {
  const s = prev.settings;
  if (prev.ok !== true) return "the last record did not pass";
  if (prev.schema_version !== VERIFICATION_SCHEMA_VERSION) return `the record's schema version is ${prev.schema_version}, this toolkit writes ${VERIFICATION_SCHEMA_VERSION}`;
  if (prev.toolkit_version !== TOOLKIT_VERSION) return `the record was made by lmr ${prev.toolkit_version}, this is ${TOOLKIT_VERSION}`;
  if (prev.toolkit_hash !== toolkitHash()) {
    return prev.toolkit_hash === undefined
      ? "the record names no toolkit build (made before records carried one)"
      : `the toolkit's grading code changed since the record (harness, bridge, masker, runner or verify: ${prev.toolkit_hash.slice(0, 12)} then, ${toolkitHash().slice(0, 12)} now)`;
  }
  if (prev.inputs?.task !== taskHash) return "the task's files changed since the record";
  if (prev.inputs.upstream?.tree !== upstreamTree) return "the local upstream's files changed since the record";
  if (!s || s.runs !== settings.runs || s.mutants !== settings.mutants || s.min_kill_ratio !== settings.min_kill_ratio || s.min_alternatives !== settings.min_alternatives || s.seed !== settings.seed) {
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

function baseRequest(task: ResolvedTask, bundle: BundleInfo, python: PythonEnv, opts: VerifyOptions, scratchParent: string): RunRequest {
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
export async function scoreTaskGiveaway(task: ResolvedTask, bundle: BundleInfo): Promise<GiveawayRecord> {
  const files = await readReferences(bundle);
  const bodies = bundle.targets.map((t) => files[t.file]!.split("\n").slice(t.start_line - 1, t.end_line).join("\n"));
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
  const code = "import json,sys\nfrom importlib import metadata as m\nout={}\nfor n in sys.argv[1:]:\n  try: out[n]=m.version(n)\n  except Exception: out[n]='missing'\nprint(json.dumps(out))";
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

async function finish(record: VerificationRecord, task: ResolvedTask, opts: VerifyOptions, t0: number, ctx: { rerunReason?: string; committed?: Committed; cacheDir: string; warnings: string[] }): Promise<VerifyResult> {
  settleRecord(record);
  record.timings.total_s = since(t0);
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
