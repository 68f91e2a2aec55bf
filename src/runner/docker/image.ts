import { inspectImage, probeDocker } from "../../env/docker-cli.js";
import { envImageTag } from "../../env/images.js";
import { IMAGE_NODE, IMAGE_PYTHON, describeSpec, normaliseEnvironment, type EnvSpec, type TestRunnerName } from "../../env/spec.js";
import type { Environment } from "../../manifest/types.js";
import { sweepStaleContainers } from "./sweep.js";
import type { DockerTarget, ImageRecord } from "../types.js";

export type { DockerTarget };

const DEFAULT_ENV: Environment = { python: "3.11", requirements: [], gpu: false, network: false };
/** A missing image is asked again after this long: `lmr env build` may have run meanwhile. */
const MISSING_TTL_MS = 30_000;
const found = new Map<string, { id: string; digest: string | null }>();
const missing = new Map<string, number>();
let swept: Promise<void> | undefined;

/**
 * The environment image for `environment` (and the tests' `runner`: node-test images
 * carry Node) if Docker answers and it is built.
 * The tag is computed without Docker (src/env/images.ts); the image is
 * inspected once per process. The first docker run of a process also removes
 * containers that runs of dead lmr processes left behind.
 */
export async function findDockerTarget(
  environment: Readonly<Environment> | undefined,
  runner: TestRunnerName = "pytest",
): Promise<{ target: DockerTarget; why: string } | { reason: string; short: string; buildable?: boolean }> {
  const daemon = await probeDocker();
  if (!daemon.ok) return { reason: daemon.reason, short: daemon.reason };
  let spec: EnvSpec;
  try {
    spec = normaliseEnvironment(environment ?? DEFAULT_ENV, runner);
  } catch (err) {
    const e = err as Error & { hint?: string };
    return { reason: `environment.base: ${e.message}${e.hint ? `; ${e.hint}` : ""}`, short: e.message };
  }
  const tag = await envImageTag(spec);
  let image = found.get(tag);
  if (!image && (missing.get(tag) ?? 0) < Date.now()) {
    const info = await inspectImage(tag);
    if (info) {
      image = { id: info.id, digest: info.digests[0] ?? null };
      found.set(tag, image);
    } else missing.set(tag, Date.now() + MISSING_TTL_MS);
  }
  if (!image) {
    return {
      reason: `the environment image ${tag} (${describeSpec(spec)}) is not built; run \`lmr env build TASK_DIR\``,
      short: `no image ${tag} for this environment (lmr env build)`,
      buildable: true,
    };
  }
  swept ??= sweepStaleContainers().then(
    () => undefined,
    () => undefined,
  );
  await swept;
  return {
    target: {
      tag,
      id: image.id,
      digest: image.digest,
      python: spec.node ? IMAGE_NODE : IMAGE_PYTHON,
      pythonVersion: spec.node ? "node" : spec.python,
      spec,
      gpu: environment?.gpu ?? false,
    },
    why: `Docker ${daemon.version} answers and ${tag} is built`,
  };
}

/** Forget what was found (tests that build and remove images within one process). */
export function forgetDockerTargets(): void {
  found.clear();
  missing.clear();
  swept = undefined;
}

/** The image record of a task's environment image (for verification records), if it is built. */
export async function dockerImageOf(environment: Readonly<Environment> | undefined, runner: TestRunnerName = "pytest"): Promise<ImageRecord | undefined> {
  const found = await findDockerTarget(environment, runner);
  return "target" in found ? { tag: found.target.tag, id: found.target.id, digest: found.target.digest } : undefined;
}
