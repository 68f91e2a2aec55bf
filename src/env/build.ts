import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { LmrError } from "../core/errors.js";
import { pipFailedPackage } from "./python-env.js";
import { dockerError, inspectImage, probeDocker, streamDocker, type ImageInfo } from "./docker-cli.js";
import { LABEL, ROOTFS_REPO, planBase, planEnv, type BaseImagePlan, type EnvImagePlan } from "./images.js";
import { baseImageVariable, parseBase, type EnvSpec } from "./spec.js";

type Layer = "base" | "env";

/** Progress of a build: a layer starting, one Dockerfile step, or a layer finished or found up to date. */
export type BuildEvent =
  | { kind: "start"; layer: Layer; tag: string; why: string }
  | { kind: "step"; layer: Layer; tag: string; step: number; total: number; text: string }
  | { kind: "line"; layer: Layer; tag: string; text: string }
  | { kind: "done"; layer: Layer; tag: string; seconds: number }
  | { kind: "cached"; layer: Layer; tag: string };

export interface BuildOptions {
  /** `--base-image`: the image bases are built FROM, over $LMR_BASE_IMAGE_<BASE> and the defaults. */
  baseImage?: string;
  /** Rebuild both layers even when they are up to date. */
  force?: boolean;
  onEvent?: (e: BuildEvent) => void;
}

export interface LayerResult {
  layer: Layer;
  tag: string;
  id: string;
  size: number;
  /** False when the image was already there and up to date. */
  built: boolean;
  seconds: number;
}

export interface BaseSource {
  ref: string;
  /** Where the choice came from. */
  from: "flag" | "env" | "rootfs" | "registry";
}

/**
 * The image a base is built FROM: --base-image, then $LMR_BASE_IMAGE_<BASE>,
 * then a rootfs import made by `lmr env base` (lmr-rootfs:<suite>) if present,
 * then the registry's image of that name (debian:bookworm, python:3.12-slim).
 */
export async function resolveBaseSource(base: string, flag?: string): Promise<BaseSource> {
  if (flag) return { ref: flag, from: "flag" };
  const env = process.env[baseImageVariable(base)];
  if (env) return { ref: env, from: "env" };
  const b = parseBase(base);
  if (b?.kind === "debian") {
    const local = `${ROOTFS_REPO}:${b.suite}`;
    if (await inspectImage(local)) return { ref: local, from: "rootfs" };
  }
  return { ref: base, from: "registry" };
}

async function requireDaemon(): Promise<void> {
  const d = await probeDocker();
  if (!d.ok)
    throw new LmrError({
      code: "env/no-docker",
      message: d.reason,
      hint: "install Docker (apt-get install docker.io) and start dockerd; `docker info` must answer",
    });
}

/** The base image, built when missing, when its source image changed, or with --force. */
export async function ensureBase(spec: Pick<EnvSpec, "base" | "python">, opts: BuildOptions = {}): Promise<LayerResult> {
  await requireDaemon();
  const source = await resolveBaseSource(spec.base, opts.baseImage);
  const plan = await planBase(spec, source.ref);
  const have = await inspectImage(plan.tag);
  const sourceInfo = await inspectImage(source.ref);
  // A registry source that was never pulled cannot have changed under us: keep the base.
  const stale = have && sourceInfo && have.labels[LABEL.sourceId] !== sourceInfo.id;
  if (have && !stale && !opts.force) {
    opts.onEvent?.({ kind: "cached", layer: "base", tag: plan.tag });
    return { layer: "base", tag: plan.tag, id: have.id, size: have.size, built: false, seconds: 0 };
  }
  const why = !have ? "not built yet" : stale ? `its source ${source.ref} changed` : "--force";
  const labels = {
    [LABEL.kind]: "base",
    [LABEL.key]: plan.key,
    [LABEL.base]: spec.base,
    [LABEL.source]: source.ref,
    ...(sourceInfo ? { [LABEL.sourceId]: sourceInfo.id } : {}),
  };
  return runBuild(plan, labels, why, opts, source);
}

/** The environment image for a spec (and its base), built only when missing or out of date. */
export async function ensureEnv(spec: EnvSpec, opts: BuildOptions = {}): Promise<{ base: LayerResult; env: LayerResult }> {
  const base = await ensureBase(spec, opts);
  const plan = await planEnv(spec);
  const have = await inspectImage(plan.tag);
  const stale = have && have.labels[LABEL.baseId] !== base.id;
  if (have && !stale && !opts.force) {
    opts.onEvent?.({ kind: "cached", layer: "env", tag: plan.tag });
    return { base, env: { layer: "env", tag: plan.tag, id: have.id, size: have.size, built: false, seconds: 0 } };
  }
  const why = !have ? "not built yet" : stale ? `its base ${base.tag} was rebuilt` : "--force";
  const labels = { [LABEL.kind]: "env", [LABEL.key]: plan.key, [LABEL.spec]: JSON.stringify(spec), [LABEL.base]: spec.base, [LABEL.baseId]: base.id };
  return { base, env: await runBuild(plan, labels, why, opts) };
}

/**
 * The CA bundle pip inside a build trusts: $LMR_BUILD_CA_BUNDLE ("" for none),
 * else the one pip on this machine is told to use (PIP_CERT, REQUESTS_CA_BUNDLE,
 * SSL_CERT_FILE), else the system's. Behind a TLS-inspecting proxy the image's
 * own roots do not verify PyPI; the host's do. Not part of any tag: it changes
 * how packages are fetched, not which.
 */
export function findBuildCaBundle(): string | undefined {
  const explicit = process.env.LMR_BUILD_CA_BUNDLE;
  if (explicit !== undefined) return explicit === "" ? undefined : explicit;
  for (const p of [process.env.PIP_CERT, process.env.REQUESTS_CA_BUNDLE, process.env.SSL_CERT_FILE, "/etc/ssl/certs/ca-certificates.crt"]) {
    if (p && existsSync(p)) return p;
  }
  return undefined;
}

async function writeContext(plan: BaseImagePlan | EnvImagePlan): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `lmr-build-${plan.layer}-`));
  for (const [rel, content] of Object.entries(plan.files)) {
    await mkdir(dirname(join(dir, rel)), { recursive: true });
    await writeFile(join(dir, rel), content);
  }
  const ca = findBuildCaBundle();
  await writeFile(join(dir, "build-ca.crt"), ca ? await readFile(ca) : "");
  return dir;
}

async function runBuild(
  plan: BaseImagePlan | EnvImagePlan,
  labels: Record<string, string>,
  why: string,
  opts: BuildOptions,
  source?: BaseSource,
): Promise<LayerResult> {
  const t0 = performance.now();
  const emit = opts.onEvent ?? (() => {});
  emit({ kind: "start", layer: plan.layer, tag: plan.tag, why });
  const ctx = await writeContext(plan);
  let step = { n: 0, total: 0, text: "" };
  try {
    // The legacy builder (BuildKit is not in every Debian docker.io) with the host's
    // network: apt and pip reach their mirrors from inside the build.
    const args = ["build", "--network", "host", "--force-rm", "--tag", plan.tag, ...Object.entries(labels).flatMap(([k, v]) => ["--label", `${k}=${v}`]), ctx];
    const r = await streamDocker(
      args,
      (raw) => {
        const line = stripAnsi(raw);
        const m = /^Step (\d+)\/(\d+) : (.*)$/.exec(line);
        if (m) {
          step = { n: Number(m[1]), total: Number(m[2]), text: m[3]! };
          emit({ kind: "step", layer: plan.layer, tag: plan.tag, step: step.n, total: step.total, text: step.text });
        } else emit({ kind: "line", layer: plan.layer, tag: plan.tag, text: line });
      },
      { env: { DOCKER_BUILDKIT: "0" } },
    );
    if (r.exitCode !== 0) throw buildFailure(plan, step, r.tail.map(stripAnsi), source);
  } finally {
    await rm(ctx, { recursive: true, force: true });
  }
  const info: ImageInfo | undefined = await inspectImage(plan.tag);
  if (!info) throw dockerError(`find ${plan.tag} after building it`, { exitCode: 1, stdout: "", stderr: "" });
  const seconds = (performance.now() - t0) / 1000;
  emit({ kind: "done", layer: plan.layer, tag: plan.tag, seconds });
  return { layer: plan.layer, tag: plan.tag, id: info.id, size: info.size, built: true, seconds };
}

/** apt and pip colour their errors even into a pipe. */
function stripAnsi(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/\u001b\[[0-9;]*m/g, "");
}

/** Which package a failed apt or pip step could not install, from its output. */
export function failedPackage(tail: string[]): { tool: "apt" | "pip"; name: string } | undefined {
  const text = tail.join("\n");
  const apt = /E: (?:Unable to locate package |Package '?)([^\s']+)/.exec(text) ?? /E: Version '[^']+' for '([^']+)' was not found/.exec(text);
  if (apt?.[1]) return { tool: "apt", name: apt[1] };
  const pip = pipFailedPackage(text);
  return pip ? { tool: "pip", name: pip } : undefined;
}

function buildFailure(plan: BaseImagePlan | EnvImagePlan, step: { n: number; total: number; text: string }, tail: string[], source?: BaseSource): LmrError {
  const where = step.n > 0 ? `step ${step.n}/${step.total} (${step.text.slice(0, 120)})` : "before the first step";
  const pkg = failedPackage(tail);
  const last = tail
    .filter((l) => l.trim() && !/^ ---> |^Removing intermediate/.test(l))
    .slice(-4)
    .join(" | ");
  const pullFailed =
    step.n <= 1 && /pull access denied|registry-1\.docker\.io|no such host|manifest unknown|not found: manifest|i\/o timeout/i.test(tail.join("\n"));
  if (plan.layer === "base" && pullFailed && source) {
    return new LmrError({
      code: "env/base-source-missing",
      message: `the ${plan.base} base (${plan.tag}) cannot be built: its source image ${source.ref} is not here and the registry cannot be reached (${last})`,
      hint:
        parseBase(plan.base)?.kind === "debian"
          ? `run \`lmr env base ${plan.base} --from-rootfs\` (debootstrap + docker import), or name a local image with --base-image or ${baseImageVariable(plan.base)}`
          : `pull or load ${source.ref} where a registry is reachable, or name a local image with --base-image or ${baseImageVariable(plan.base)}`,
    });
  }
  const field = plan.layer === "env" && pkg ? (pkg.tool === "apt" ? "environment.system_packages" : "environment.requirements") : undefined;
  return new LmrError({
    code: pkg && field ? "env/package-failed" : `env/${plan.layer}-build-failed`,
    ...(field ? { pointer: `/${field.replace(".", "/")}` } : {}),
    message: `building the ${plan.layer} layer ${plan.tag} failed at ${where}${pkg ? `: ${pkg.tool} could not install ${pkg.name}` : ""}: ${last}`,
    hint: field
      ? `check ${pkg!.name} in ${field} (name, version, and that the ${pkg!.tool === "apt" ? "Debian release has it" : "package index is reachable"})`
      : `rerun with the Dockerfile from \`lmr env build --print\` to see the whole log`,
  });
}
