import { ensureEnv } from "../env/build.js";
import { DEBIAN_NODE, IMAGE_NODE, IMAGE_PYTHON, majorMinor, normaliseEnvironment, type TestRunnerName } from "../env/spec.js";
import type { Environment } from "../manifest/types.js";
import { noteBackend } from "./backends.js";
import { findDockerTarget, forgetDockerTargets } from "./docker/image.js";
import { nodeRuntime } from "../env/node-env.js";
import { resolvePython, type ResolvePythonOptions } from "../env/python-env.js";
import type { PythonEnv, SandboxChoice } from "./types.js";

export interface RunPythonOptions extends ResolvePythonOptions {
  sandbox?: SandboxChoice;
  environment?: Readonly<Environment>;
}

/**
 * The interpreter `runTests` will use for a task. When docker runs it (chosen,
 * or picked by `auto` because the image is built) that is the image's own, and
 * nothing is resolved or installed on the host; otherwise the host's
 * (resolvePython: --python, or a cached venv over LMR_PYTHON).
 *
 * `--sandbox docker` builds a missing environment image first, as `lmr env
 * build` would: after a harness change that is seconds (only the last layer
 * changes), and the user asked for docker. `auto` never builds. A build that
 * fails throws, naming the layer and the package.
 */
export async function resolveRunPython(opts: RunPythonOptions): Promise<PythonEnv> {
  return (await inImage(opts, "pytest")) ?? resolvePython(opts);
}

/**
 * The Node a node-test task's runs use, as resolveRunPython does for Python: under docker
 * (chosen, or picked by `auto` because the image is built) the image's Debian nodejs,
 * named with its image (`--sandbox docker` builds a missing image first); otherwise the
 * Node that runs lmr. The version in the image is the base's major (DEBIAN_NODE) until a
 * run's harness says exactly which (RunOutcome.python).
 */
export async function resolveRunNode(opts: Pick<RunPythonOptions, "sandbox" | "environment">): Promise<PythonEnv> {
  return (await inImage(opts, "node-test")) ?? nodeRuntime();
}

async function inImage(opts: Pick<RunPythonOptions, "sandbox" | "environment">, runner: TestRunnerName): Promise<PythonEnv | undefined> {
  const choice = opts.sandbox ?? "auto";
  if (choice === "docker" || (choice === "auto" && opts.environment)) {
    let found = await findDockerTarget(opts.environment, runner);
    if (!("target" in found) && choice === "docker" && found.buildable) {
      const env = opts.environment ?? { python: "3.11", requirements: [], gpu: false, network: false };
      await ensureEnv(normaliseEnvironment(env, runner), {
        onEvent: (e) => {
          if (e.kind === "start") noteBackend(`lmr: --sandbox docker: building ${e.layer} layer ${e.tag} (${e.why})`);
          else if (e.kind === "done") noteBackend(`lmr: built ${e.tag} in ${e.seconds.toFixed(1)} s`);
        },
      });
      forgetDockerTargets();
      found = await findDockerTarget(opts.environment, runner);
    }
    if ("target" in found) {
      const t = found.target;
      const version = t.spec.node ? `node ${DEBIAN_NODE[t.spec.base] ?? "?"}` : t.pythonVersion;
      return { path: t.python, version, prefixes: [], image: { tag: t.tag, id: t.id, digest: t.digest, gpu: t.gpu } };
    }
    if (choice === "docker")
      return runner === "node-test"
        ? { path: IMAGE_NODE, version: "node", prefixes: [] }
        : { path: IMAGE_PYTHON, version: majorMinor(opts.environment?.python ?? "3.11"), prefixes: [] };
  }
  return undefined;
}
