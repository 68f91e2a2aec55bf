import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { sha256, listFiles } from "../core/hash.js";
import { toolkitPath } from "../core/paths.js";
import { renderTemplate } from "../core/template.js";
import { IMAGE_UID, baseImageVariable, describeSpec, parseBase, type EnvSpec } from "./spec.js";

/*
 * Image names and the files they are built from. Two layers, as in
 * SWE-bench's harness: a base per (base, Python) and an environment image per
 * distinct spec. Tags are content hashes of what goes into the build, so they
 * are a pure function of the spec and the toolkit: the runner can name the
 * image a task needs without asking Docker, and an unchanged spec means an
 * existing image. What the base was built FROM (registry or rootfs) is not in
 * the tag; it is a label, and `lmr env build` rebuilds when it changed.
 */

const BASE_REPO = "lmr-base";
const ENV_REPO = "lmr-env";
export const ROOTFS_REPO = "lmr-rootfs";
/** Label keys on every image and container lmr makes. */
export const LABEL = {
  kind: "lmr.kind",
  key: "lmr.key",
  spec: "lmr.spec",
  base: "lmr.base",
  source: "lmr.source",
  sourceId: "lmr.source.id",
  baseId: "lmr.base.id",
} as const;

/** Packages every Debian base has: the interpreter, pytest, pip for requirements, TLS roots for pip. */
export const DEBIAN_BASE_PACKAGES = ["python3", "python3-pytest", "python3-pip", "ca-certificates"];
/** pytest for the python:X.Y-slim bases (Debian bases use their release's python3-pytest). */
const SLIM_PYTEST = "8.3.5";

interface BuildFiles {
  /** Relative path in the build context → content. */
  files: Record<string, string | Buffer>;
}

export interface BaseImagePlan extends BuildFiles {
  layer: "base";
  key: string;
  tag: string;
  base: string;
  python: string;
  /** The template the Dockerfile comes from, relative to the toolkit. */
  template: string;
  /** Where the Dockerfile says FROM: filled in when the source is known. */
  source: string;
}

export interface EnvImagePlan extends BuildFiles {
  layer: "env";
  key: string;
  tag: string;
  spec: EnvSpec;
  template: string;
  baseTag: string;
}

const cache = new Map<string, Promise<string | Buffer>>();
function readCached(path: string, binary = false): Promise<string | Buffer> {
  const k = `${binary}:${path}`;
  if (!cache.has(k)) cache.set(k, binary ? readFile(path) : readFile(path, "utf8"));
  return cache.get(k)!;
}

/**
 * What of the toolkit's python/ decides verdicts, as build-context files, read once per
 * process: the harness (python/lmr_harness), the bridge between the tests and the code under
 * test (python/lmr_bridge) and the record codec they exchange values in. It is baked in, so
 * what ran is what the tag names. The rest of lmr_record (the recorder, an author's tool,
 * never a verdict) is mounted from the toolkit when `lmr record` runs in a container, so
 * editing it does not invalidate every image.
 */
const BAKED_PACKAGES = ["lmr_harness", "lmr_bridge"];
const BAKED_CODEC = ["__init__.py", "codec.py", "encode.py", "group.py"];
let toolkitPython: Promise<Record<string, Buffer>> | undefined;
/** Those files, keyed `python/<package>/<file>`. */
export function readToolkitPython(): Promise<Record<string, Buffer>> {
  toolkitPython ??= (async () => {
    const junk = (rel: string, isDir: boolean): boolean => (isDir ? /(^|\/)(__pycache__|\.pytest_cache)$/.test(rel) : /\.py[co]$/.test(rel));
    const out: Record<string, Buffer> = {};
    for (const pkg of BAKED_PACKAGES) {
      const root = toolkitPath("python", pkg);
      for (const rel of await listFiles(root, junk)) out[`python/${pkg}/${rel}`] = (await readCached(join(root, rel), true)) as Buffer;
    }
    for (const f of BAKED_CODEC) out[`python/lmr_record/${f}`] = (await readCached(toolkitPath("python", "lmr_record", f), true)) as Buffer;
    return out;
  })();
  return toolkitPython;
}

/**
 * What a node-test image adds (templates/docker/env.Dockerfile copies `node/` to
 * /opt/lmr/node): the Node harness (node/lmr-harness), which decides verdicts, and
 * `typescript.cjs`, the one-file compiler ts-morph bundles, which the harness's loader
 * hooks transpile .ts files with (on the host they take it from ts-morph itself). Both are
 * baked in and hashed into the tag: what transpiled the grader's files is what the tag names.
 */
let toolkitNode: Promise<Record<string, Buffer>> | undefined;
export function readToolkitNode(): Promise<Record<string, Buffer>> {
  toolkitNode ??= (async () => {
    const root = toolkitPath("node", "lmr-harness");
    const out: Record<string, Buffer> = {};
    for (const rel of await listFiles(root)) out[`node/lmr-harness/${rel}`] = (await readCached(join(root, rel), true)) as Buffer;
    const require = createRequire(toolkitPath("package.json"));
    const tsMorph = require.resolve("ts-morph");
    out["node/typescript.cjs"] = (await readCached(createRequire(tsMorph).resolve("@ts-morph/common/dist/typescript.js"), true)) as Buffer;
    return out;
  })();
  return toolkitNode;
}

/** sha256 over (name, content) pairs in name order: a build context's identity. */
function hashFiles(files: Record<string, string | Buffer>, extra: unknown): string {
  const h = [JSON.stringify(extra)];
  for (const name of Object.keys(files).sort()) h.push(name, sha256(files[name]!));
  return sha256(h.join("\n")).slice(0, 16);
}

function baseTemplate(base: string): string {
  return parseBase(base)?.kind === "python" ? "templates/docker/base-python.Dockerfile" : "templates/docker/base-debian.Dockerfile";
}

/**
 * The base layer for a spec. `source` is the image it is built FROM; only the
 * Dockerfile shown or built uses it, the key does not (see the note above).
 */
export async function planBase(spec: Pick<EnvSpec, "base" | "python">, source = "<source>"): Promise<BaseImagePlan> {
  const template = baseTemplate(spec.base);
  const text = (await readCached(toolkitPath(template))) as string;
  const data = {
    base: spec.base,
    python: spec.python,
    uid: String(IMAGE_UID),
    packages: DEBIAN_BASE_PACKAGES.join(" "),
    pytest: SLIM_PYTEST,
    variable: baseImageVariable(spec.base),
  };
  const key = sha256(JSON.stringify({ template: text, ...data })).slice(0, 16);
  const tag = `${BASE_REPO}:${key}`;
  const dockerfile = renderTemplate(text, { ...data, tag, source }, template);
  return { layer: "base", key, tag, base: spec.base, python: spec.python, template, source, files: { Dockerfile: dockerfile } };
}

/**
 * The environment layer for a spec: Dockerfile, requirements.txt, the toolkit's python/
 * folder, and for a node-test spec its node/ folder. Planned once per spec and process:
 * the runner names the tag before every run, and a node plan hashes a 9 MB compiler.
 */
const plans = new Map<string, Promise<EnvImagePlan>>();
export function planEnv(spec: EnvSpec): Promise<EnvImagePlan> {
  const k = JSON.stringify(spec);
  let p = plans.get(k);
  if (!p) {
    p = makeEnvPlan(spec);
    p.catch(() => plans.delete(k));
    plans.set(k, p);
  }
  return p;
}

async function makeEnvPlan(spec: EnvSpec): Promise<EnvImagePlan> {
  const base = await planBase(spec);
  const template = "templates/docker/env.Dockerfile";
  const text = (await readCached(toolkitPath(template))) as string;
  const data = {
    base_image: base.tag,
    summary: describeSpec(spec),
    uid: String(IMAGE_UID),
    system_packages: withBlas(spec.system_packages).join(" "),
    requirements: spec.requirements.length > 0 ? "yes" : "",
    node: spec.node ? "yes" : "",
  };
  const python = await readToolkitPython();
  const files: Record<string, string | Buffer> = { ...python, ...(spec.node ? await readToolkitNode() : {}) };
  if (spec.requirements.length > 0) files["requirements.txt"] = spec.requirements.join("\n") + "\n";
  // The tag cannot be inside the hashed Dockerfile: hash the file without it, then name it.
  files.Dockerfile = renderTemplate(text, { ...data, tag: "" }, template);
  const key = hashFiles(files, { spec, base: base.key });
  const tag = `${ENV_REPO}:${key}`;
  files.Dockerfile = renderTemplate(text, { ...data, tag }, template);
  return { layer: "env", key, tag, spec, template, baseTag: base.tag, files };
}

/** The image tag a spec runs in, without building or asking Docker. */
export async function envImageTag(spec: EnvSpec): Promise<string> {
  return (await planEnv(spec)).tag;
}

/** Debian packages whose numbers go through libblas.so.3. */
const BLAS_USERS = /^python3-(numpy|scipy|torch|sklearn|pandas|pot)$/;

/**
 * Debian's numeric packages link libblas.so.3, which an install without recommends
 * satisfies with the reference BLAS: 3-10x slower than OpenBLAS, and summing in another
 * order, so float64 results differ in the last digits from a host that has OpenBLAS (as a
 * Debian desktop or CI machine usually has) and recorded fixtures do not regenerate byte
 * for byte. An image with such a package gets OpenBLAS too.
 */
function withBlas(packages: string[]): string[] {
  return packages.some((p) => BLAS_USERS.test(p)) && !packages.some((p) => p.startsWith("libopenblas")) ? [...packages, "libopenblas0-pthread"] : packages;
}
