import { createHash } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeJsonAtomic } from "../core/fs-atomic.js";
import type { PreloadPlan } from "../runner/fork-server.js";
import type { LoadedModules, RunOutcome } from "../runner/types.js";

/**
 * What a task's fork servers are started with: for the tests' side (the oracles' server) and
 * for the code's (the candidates' server, `candidate`), the installed modules the reference's
 * first run loaded there, and what its set-up left changed in the environment (they are
 * imported under it). Verify learns it from a fresh first run; remembered, the next verify of
 * the same inputs starts the servers at once and runs the first reference run in them.
 */
export interface ServerPlan extends PlanPart {
  candidate?: PlanPart;
}

interface PlanPart extends PreloadPlan {
  /**
   * Modules in the order the first run imported them: every module it loaded from outside
   * its own folders (submodules too: the server imports a package's lazily loaded parts once,
   * not each child), then any installed top-level module the tree imported that is not among them.
   */
  preload: string[];
  /** Names the first run left mapped to None: blocked in the server too. */
  blocked?: string[];
  /** Names that were the tree's, the grader's or a fake there: None in the server while it imports. */
  standIns?: string[];
  envChanges?: { set: Record<string, string>; unset: string[] };
}

/** The plan a passing first run implies. */
export function planOf(first: RunOutcome): ServerPlan {
  // installed top-level modules imported in the run: only where the candidate did not report
  // what it loaded. The list mixes the tests' imports with the tree's (pytest among them), and
  // a candidates' server that preloaded the tests' would report them back, so a plan made
  // with them would never hold in its own server.
  const tops = first.candidate_loaded_modules
    ? []
    : (first.imports ?? [])
        .filter((x) => x.origin === "installed")
        .map((x) => x.module)
        .sort();
  const oracle = part(first.loaded_modules, [], first.env_changes);
  const candidate =
    first.candidate_loaded_modules || tops.length > 0 || first.candidate_env_changes
      ? part(first.candidate_loaded_modules, tops, first.candidate_env_changes)
      : undefined;
  return { ...oracle, ...(candidate ? { candidate } : {}) };
}

function part(loaded: LoadedModules | undefined, extra: string[], envChanges: RunOutcome["env_changes"]): PlanPart {
  const changes = envChanges ? withoutRunFolders(envChanges) : undefined;
  return {
    preload: [...new Set([...(loaded?.modules ?? []), ...extra])],
    ...(loaded?.blocked.length ? { blocked: loaded.blocked } : {}),
    ...(loaded?.stand_ins.length ? { standIns: loaded.stand_ins } : {}),
    ...(changes ? { envChanges: changes } : {}),
  };
}

/**
 * The changes less any variable whose value names a run's scratch folder (`lmr-run-…`, a fork
 * server's `lmr-fork-…`): the harness leaves those out, and a plan remembered before it did
 * (torch 2's TORCHINDUCTOR_CACHE_DIR under the first run's TMPDIR) must not start a server
 * whose children then write into a folder that is gone or not theirs.
 */
function withoutRunFolders(c: NonNullable<PlanPart["envChanges"]>): PlanPart["envChanges"] {
  const set = Object.fromEntries(Object.entries(c.set).filter(([, v]) => !/\/lmr-(run|fork)-[^/]*/.test(v)));
  return Object.keys(set).length > 0 || c.unset.length > 0 ? { set, unset: c.unset } : undefined;
}

/**
 * The plan a passing first run in a server started with `under` implies. The child starts
 * with the variables `under` set, so a conftest that sets them again changes nothing there:
 * its changes are read on top of `under`'s, as a fresh run would have seen them.
 */
export function planInServer(first: RunOutcome, under: ServerPlan): ServerPlan {
  const own = planOf(first);
  const oracle = underPart(own, under);
  const candidate = own.candidate ? underPart(own.candidate, under.candidate ?? { preload: [] }) : undefined;
  return { ...oracle, ...(candidate ? { candidate } : {}) };
}

function underPart(own: PlanPart, under: PlanPart): PlanPart {
  const set = { ...(under.envChanges?.set ?? {}), ...(own.envChanges?.set ?? {}) };
  const unset = [...new Set([...(under.envChanges?.unset ?? []), ...(own.envChanges?.unset ?? [])])].filter(
    (k) => !(own.envChanges?.set && k in own.envChanges.set),
  );
  for (const k of own.envChanges?.unset ?? []) delete set[k];
  const changed = Object.keys(set).length > 0 || unset.length > 0;
  const { envChanges: _ownChanges, ...rest } = own;
  const { candidate: _c, ...plain } = rest as ServerPlan;
  return { ...plain, ...(changed ? { envChanges: { set, unset } } : {}) };
}

export function samePlan(a: ServerPlan, b: ServerPlan): boolean {
  return canonical(a) === canonical(b);
}

function canonicalPart(p: PlanPart): unknown {
  const set = Object.fromEntries(Object.entries(p.envChanges?.set ?? {}).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
  return {
    preload: [...p.preload].sort(),
    blocked: [...(p.blocked ?? [])].sort(),
    standIns: [...(p.standIns ?? [])].sort(),
    set,
    unset: [...(p.envChanges?.unset ?? [])].sort(),
  };
}

function canonical(p: ServerPlan): string {
  return JSON.stringify({ oracle: canonicalPart(p), candidate: p.candidate ? canonicalPart(p.candidate) : null });
}

/** Everything a plan depends on: the trees the tests run over, the grader, the interpreter and where it runs. */
export function serverPlanKey(parts: {
  workspace: string;
  reference: string;
  grader: string;
  python: string;
  pythonVersion: string;
  sandbox: string;
  environment: unknown;
}): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 32);
}

const planFile = (cacheDir: string, key: string): string => join(cacheDir, "verify", `server-plan-${key}.json`);

export async function readServerPlan(cacheDir: string, key: string): Promise<ServerPlan | undefined> {
  try {
    return parseServerPlan(JSON.parse(await readFile(planFile(cacheDir, key), "utf8")));
  } catch {
    return undefined;
  }
}

/** What of a committed record's environment says where its plan was made. */
export interface PlanOrigin {
  backend: string | null;
  python: { version: string } | null;
  image?: { id: string };
  server_plan?: unknown;
}

/**
 * The plan a committed record carries, where the record was made where this run goes: the same
 * backend, interpreter version and (docker) image. A plan from elsewhere (a docker image's
 * modules for a bwrap run) would not hold, and trying it costs a server start before the fresh run.
 */
export function committedPlanFor(
  origin: PlanOrigin | undefined,
  target: { backend: string; python: { version: string }; image?: { id: string } | undefined },
): ServerPlan | undefined {
  if (!origin || origin.backend !== target.backend || origin.python?.version !== target.python.version) return undefined;
  if ((origin.image?.id ?? null) !== (target.image?.id ?? null)) return undefined;
  return parseServerPlan(origin.server_plan);
}

/** A plan from JSON (the cache's file, a committed record's `environment.server_plan`), or undefined where it is not one. */
function parseServerPlan(value: unknown): ServerPlan | undefined {
  const v = value as Partial<ServerPlan> | undefined;
  const oracle = readPart(v);
  if (!oracle) return undefined;
  if (v!.candidate === undefined) return oracle;
  const candidate = readPart(v!.candidate);
  return candidate ? { ...oracle, candidate } : undefined;
}

function readPart(v: Partial<PlanPart> | undefined): PlanPart | undefined {
  if (!v || typeof v !== "object") return undefined;
  const names = (x: unknown): x is string[] => Array.isArray(x) && x.every((m) => typeof m === "string");
  if (!names(v.preload)) return undefined;
  if ((v.blocked !== undefined && !names(v.blocked)) || (v.standIns !== undefined && !names(v.standIns))) return undefined;
  const c = v.envChanges;
  const kept =
    c && typeof c === "object" && c.set && typeof c.set === "object" && Array.isArray(c.unset) ? withoutRunFolders({ set: c.set, unset: c.unset }) : undefined;
  return {
    preload: v.preload,
    ...(v.blocked?.length ? { blocked: v.blocked } : {}),
    ...(v.standIns?.length ? { standIns: v.standIns } : {}),
    ...(kept ? { envChanges: kept } : {}),
  };
}

export async function writeServerPlan(cacheDir: string, key: string, plan: ServerPlan): Promise<void> {
  await mkdir(join(cacheDir, "verify"), { recursive: true });
  await writeJsonAtomic(planFile(cacheDir, key), plan);
}
