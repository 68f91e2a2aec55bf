import { ensureEnv } from "../env/build.js";
import { IMAGE_PYTHON, majorMinor, normaliseEnvironment } from "../env/spec.js";
import type { Environment } from "../manifest/types.js";
import { noteBackend } from "./backends.js";
import { findDockerTarget, forgetDockerTargets } from "./docker-image.js";
import { resolvePython, type ResolvePythonOptions } from "./python-env.js";
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
  const choice = opts.sandbox ?? "auto";
  if (choice === "docker" || (choice === "auto" && opts.environment)) {
    let found = await findDockerTarget(opts.environment);
    if (!("target" in found) && choice === "docker" && found.buildable) {
      const env = opts.environment ?? { python: "3.11", requirements: [], gpu: false, network: false };
      await ensureEnv(normaliseEnvironment(env), {
        onEvent: (e) => {
          if (e.kind === "start") noteBackend(`lmr: --sandbox docker: building ${e.layer} layer ${e.tag} (${e.why})`);
          else if (e.kind === "done") noteBackend(`lmr: built ${e.tag} in ${e.seconds.toFixed(1)} s`);
        },
      });
      forgetDockerTargets();
      found = await findDockerTarget(opts.environment);
    }
    if ("target" in found) {
      const t = found.target;
      return { path: t.python, version: t.pythonVersion, prefixes: [], image: { tag: t.tag, id: t.id, digest: t.digest, gpu: t.gpu } };
    }
    if (choice === "docker") return { path: IMAGE_PYTHON, version: majorMinor(opts.environment?.python ?? "3.11"), prefixes: [] };
  }
  return resolvePython(opts);
}
