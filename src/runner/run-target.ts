import { LmrError } from "../core/errors.js";
import type { Environment } from "../manifest/types.js";
import { bwrapBackend, dockerBackend, hostChoiceFor, localBackend, selectBackend } from "./backends.js";
import { resolveRunNode, resolveRunPython } from "./run-python.js";
import type { Backend, BackendName, PythonEnv, RunTarget, SandboxChoice, TestRunner } from "./types.js";

export type { RunTarget };

export interface ResolveTargetOptions {
  sandbox: SandboxChoice;
  environment: Readonly<Environment>;
  runner?: TestRunner;
  /** --python: an interpreter on this machine (then `auto` never picks docker). */
  python?: string;
  cacheDir?: string;
}

/**
 * Resolves a task's run target: docker when asked (building a missing image, as `lmr env
 * build` would) or when `auto` finds the task's image built; else bubblewrap where it works
 * (required when asked); else the local backend (only when asked, or when `auto` finds no
 * sandbox at all, which it says). A target that cannot be had throws an infra error naming why.
 */
export async function resolveRunTarget(o: ResolveTargetOptions): Promise<RunTarget> {
  const runner = o.runner ?? "pytest";
  // an interpreter named on the command line lives on this machine: `auto` never picks docker then
  const choice = o.python ? await hostChoiceFor(o.sandbox, o.python) : o.sandbox;
  const interpreter = (sandbox: SandboxChoice): Promise<PythonEnv> =>
    runner === "node-test"
      ? resolveRunNode({ sandbox, environment: o.environment })
      : resolveRunPython({
          sandbox,
          environment: o.environment,
          ...(o.python ? { python: o.python } : {}),
          requirements: o.environment.requirements,
          ...(o.cacheDir ? { cacheDir: o.cacheDir } : {}),
        });
  // asked for docker: the image is built first if it is missing
  const python = choice === "docker" ? await interpreter("docker") : undefined;
  const sel = await selectBackend(choice, o.environment, { runner });
  if ("reason" in sel) {
    throw new LmrError({
      code: "run/no-sandbox",
      message: `--sandbox ${o.sandbox}: ${sel.reason}`,
      hint: "install bubblewrap, build the task's image (lmr env build), or choose another --sandbox",
    });
  }
  if (sel.backend.name === "docker")
    return { backend: "docker", python: python ?? (await interpreter("auto")), ...(sel.image ? { image: sel.image } : {}), runner, reason: sel.why };
  return { backend: sel.backend.name, python: await interpreter(sel.backend.name === "bwrap" ? "bwrap" : "none"), runner, reason: sel.why };
}

/** The backend object a target names. */
export function backendOf(t: Pick<RunTarget, "backend">): Backend {
  return t.backend === "docker" ? dockerBackend : t.backend === "bwrap" ? bwrapBackend : localBackend;
}

/** What of a target decides an outcome, for keys: the backend, the image (by id) and the interpreter. */
export function targetIdentity(t: RunTarget): { backend: BackendName; image: string | null; python: string; version: string } {
  return { backend: t.backend, image: t.image?.id ?? null, python: t.python.path, version: t.python.version };
}
