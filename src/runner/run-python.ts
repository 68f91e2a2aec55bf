import type { Environment } from "../manifest/types.js";
import { IMAGE_PYTHON, majorMinor } from "../env/spec.js";
import { findDockerTarget } from "./docker-image.js";
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
 * (resolvePython: --python, or a cached venv over LMR_PYTHON). With `docker`
 * and no image the image's path is returned all the same: the run then
 * reports, as infra, that the image is not built.
 */
export async function resolveRunPython(opts: RunPythonOptions): Promise<PythonEnv> {
  const choice = opts.sandbox ?? "auto";
  if (choice === "docker" || (choice === "auto" && opts.environment)) {
    const found = await findDockerTarget(opts.environment);
    if ("target" in found) {
      const t = found.target;
      return { path: t.python, version: t.pythonVersion, prefixes: [], image: { tag: t.tag, id: t.id, digest: t.digest, gpu: t.gpu } };
    }
    if (choice === "docker") return { path: IMAGE_PYTHON, version: majorMinor(opts.environment?.python ?? "3.11"), prefixes: [] };
  }
  return resolvePython(opts);
}
