import type { BundleInfo } from "../bundle/index.js";
import type { Environment } from "../manifest/types.js";
import { ForkServer } from "../runner/fork-server.js";
import { runTests } from "../runner/index.js";
import { targetIdentity, type RunTarget } from "../runner/run-target.js";
import type { RunOutcome, RunRequest } from "../runner/types.js";
import { findMissingModule, missingModuleReason } from "./environment-step.js";
import type { RunsStep } from "./record.js";
import type { RunSlots } from "./run-slots.js";
import { planInServer, planOf, readServerPlan, samePlan, serverPlanKey, writeServerPlan, type ServerPlan } from "./server-plan.js";
import { repeatRuns, type Tick } from "./steps.js";

interface ReferenceStepInput {
  /** The reference's target files by workspace-relative path, laid over the workspace in every run. */
  references: Record<string, string>;
  runs: number;
  slots: RunSlots;
  /** What every run of the task starts from: the bundle's workspace and grader, the interpreter, the limits. */
  base: RunRequest & { target: RunTarget; scratchParent: string };
  environment: Readonly<Environment>;
  /** The fast path: run 1 traces which target lines each test executes. */
  fast: boolean;
  /** Start a fork server from run 1's imports for the other runs (and the stub and mutants after). */
  useServer: boolean;
  /** Where the server plan of these inputs is remembered. */
  cacheDir: string;
  hashes: BundleInfo["hashes"];
  /** The server plan the committed record carries: a cold cache (a fresh clone, a CI machine) starts from it. */
  committedPlan: () => Promise<ServerPlan | undefined>;
  tick: Tick;
}

export interface ReferenceStepResult {
  step: RunsStep;
  outcomes: RunOutcome[];
  backend?: RunOutcome["backend"];
  /** The fork server the reference ran in, when one started: the caller runs its trusted code there and closes it. */
  server?: ForkServer;
  /** The plan of that server, or of a passing run 1 that it would start from, for the record (environment.server_plan). */
  serverPlan?: ServerPlan;
}

/**
 * The reference step: the reference passes every one of `runs` runs.
 *
 * Run 1 also reports the imports (the environment step, and what a fork server should
 * preload) and, on the fast path, traces which target lines each test executes (a mutant
 * then runs only where it can be killed). The reference is our code: its other runs go to
 * the fork server started from run 1's imports, where there is one. Run 1 is a fresh process
 * unless the server plan those imports gave is remembered for these very inputs (in the cache,
 * else in the committed record): then the server starts at once and run 1 runs in it; a plan
 * that no longer holds, or a run 1 that does not pass there, falls back to the fresh run. The
 * step says which path ran (plan_source). A reference that fails because a module is missing
 * is an infrastructure failure: it says nothing about the task.
 */
export async function referenceStep(input: ReferenceStepInput): Promise<ReferenceStepResult> {
  const { references, base, environment, cacheDir } = input;
  const python = base.python;
  let server: ForkServer | undefined;
  let serverPlan: ServerPlan | undefined;
  let planSource: RunsStep["plan_source"];
  let serverStarted: (() => void) | undefined;
  const serverReady = new Promise<void>((r) => (serverStarted = r));
  const planKey = serverPlanKey({
    workspace: input.hashes.workspace,
    reference: input.hashes.reference,
    grader: input.hashes.grader,
    python: python.path,
    pythonVersion: python.version,
    sandbox: JSON.stringify(targetIdentity(base.target)),
    environment,
  });
  const traced = input.fast ? { traceLines: Object.keys(references) } : {};
  const runFresh = (extra: Partial<RunRequest>): Promise<RunOutcome> => runTests({ ...base, overlay: references, ...extra });
  const startServer = (plan: ServerPlan): Promise<ForkServer | undefined> =>
    ForkServer.start({
      scratchParent: base.scratchParent,
      python,
      sandbox: base.sandbox ?? "auto",
      target: base.target,
      ...plan,
      network: environment.network,
      environment,
      ...(base.memoryMb ? { memoryMb: base.memoryMb } : {}),
      ...(base.maxProcs ? { maxProcs: base.maxProcs } : {}),
    });
  const firstInRememberedServer = async (): Promise<RunOutcome | undefined> => {
    const cached = input.useServer ? await readServerPlan(cacheDir, planKey) : undefined;
    const remembered = cached ?? (input.useServer ? await input.committedPlan() : undefined);
    const early = remembered && (await startServer(remembered));
    if (!remembered || !early) return undefined;
    const first = await early.run({ ...base, overlay: references, reportImports: true, ...traced });
    if (first.status === "passed" && samePlan(planInServer(first, remembered), remembered)) {
      server = early;
      serverPlan = remembered;
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
        const first = await runFresh({ reportImports: true, ...traced });
        if (input.useServer) {
          const plan = planOf(first);
          server = await startServer(plan);
          if (server) planSource = "first-run";
          if (first.status === "passed") {
            serverPlan = plan;
            await writeServerPlan(cacheDir, planKey, plan).catch(() => undefined);
          }
        }
        return first;
      } finally {
        serverStarted!();
      }
    }
    return server ? server.run({ ...base, overlay: references }) : runFresh({ reportImports: true });
  };
  let ref: Awaited<ReturnType<typeof repeatRuns>>;
  try {
    ref = await repeatRuns("reference", input.runs, input.slots, refRun, input.tick, (i) => (i === 0 ? Promise.resolve() : serverReady));
  } catch (err) {
    await server?.close();
    throw err;
  }
  const missing = !ref.step.ok && !ref.step.infra ? findMissingModule(ref.outcomes) : undefined;
  const step = missing
    ? { ...ref.step, infra: true, reason: missingModuleReason(missing, python.path) }
    : { ...ref.step, ...(planSource ? { plan_source: planSource } : {}) };
  return {
    step,
    outcomes: ref.outcomes,
    ...(ref.backend !== undefined ? { backend: ref.backend } : {}),
    ...(server ? { server } : {}),
    ...(serverPlan ? { serverPlan } : {}),
  };
}
