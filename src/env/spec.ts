import { LmrError } from "../core/errors.js";
import { basePython } from "../manifest/environment-checks.js";
import type { Environment } from "../manifest/types.js";

/** The bases a task image can be built on (task.schema.json `environment.base`). */
export type BaseName = "debian:bookworm" | "debian:trixie" | `python:${string}-slim`;

export const DEFAULT_BASE: BaseName = "debian:bookworm";

/**
 * An environment reduced to what decides the image's content: the base, its
 * Python (major.minor) and the sorted, de-duplicated package lists. `gpu`,
 * `network` and `stand_ins` are run-time matters and leave the image alone, so
 * tasks that differ only there share one image.
 */
export interface EnvSpec {
  base: BaseName;
  python: string;
  system_packages: string[];
  requirements: string[];
  /**
   * `tests.runner: "node-test"`: the image also has the base's own Node (Debian's
   * `nodejs`, see DEBIAN_NODE) and the toolkit's Node harness. Absent, never false, for
   * pytest tasks, so their specs (and image tags) are what they were before Node came in.
   */
  node?: true;
}

/** The major Node version Debian's `nodejs` gives each Debian base (measured: 18.20.4, 20.19.2). */
export const DEBIAN_NODE: Record<string, string> = { "debian:bookworm": "18", "debian:trixie": "20" };
/** The Node a node-test image runs tests with, and where its harness lives (templates/docker/env.Dockerfile). */
export const IMAGE_NODE = "/usr/bin/node";
export const IMAGE_NODE_HARNESS = "/opt/lmr/node/lmr-harness";

/** What the container runs tests with: a venv over the base's Python (see templates/docker/env.Dockerfile). */
export const IMAGE_PYTHON = "/opt/lmr/venv/bin/python";
/** Where the env image keeps python/ of the toolkit (lmr_harness, lmr_record). */
export const IMAGE_TOOLKIT_PYTHON = "/opt/lmr/python";
/** The unprivileged user the base image creates; tests run as this uid when lmr runs as root. */
export const IMAGE_UID = 10001;

/** "debian:bookworm" → { kind: "debian", suite: "bookworm" }; "python:3.12-slim" → { kind: "python", version: "3.12" }. */
export function parseBase(base: string): { kind: "debian"; suite: string } | { kind: "python"; version: string } | undefined {
  const deb = /^debian:(bookworm|trixie)$/.exec(base);
  if (deb) return { kind: "debian", suite: deb[1]! };
  const py = /^python:(3\.\d+)-slim$/.exec(base);
  if (py) return { kind: "python", version: py[1]! };
  return undefined;
}

/** The Python major.minor a base provides. */
export function baseMajorMinor(base: string): string | undefined {
  return parseBase(base) ? basePython(base) : undefined;
}

export function majorMinor(version: string): string {
  return version.split(".").slice(0, 2).join(".");
}

function uniqueSorted(xs: readonly string[] | undefined): string[] {
  return [...new Set((xs ?? []).map((x) => x.trim()).filter(Boolean))].sort();
}

/** What runs a task's tests (`tests.runner`); only node-test changes the image. */
export type TestRunnerName = "pytest" | "node-test";

/**
 * The normalised spec of a manifest's environment, for a task whose tests
 * `runner` runs (node-test adds Node to the image). Throws for a base the
 * toolkit cannot build (the schema and `lmr validate` report it with the field
 * first; this is the guard for code that skips validation).
 */
export function normaliseEnvironment(env: Readonly<Environment>, runner: TestRunnerName = "pytest"): EnvSpec {
  const base = (env.base ?? DEFAULT_BASE) as BaseName;
  const provided = baseMajorMinor(base);
  if (!provided) {
    throw new LmrError({
      code: "env/unknown-base",
      pointer: "/environment/base",
      message: `unknown base ${JSON.stringify(base)}`,
      hint: 'use "debian:bookworm", "debian:trixie" or "python:3.X-slim"',
    });
  }
  if (runner === "node-test" && !DEBIAN_NODE[base]) {
    throw new LmrError({
      code: "env/node-base",
      pointer: "/environment/base",
      message: `tests.runner is "node-test", and the base ${JSON.stringify(base)} has no Node lmr installs`,
      hint: 'use "debian:bookworm" (Debian\'s nodejs 18) or "debian:trixie" (nodejs 20) as environment.base',
    });
  }
  return {
    base,
    python: provided,
    system_packages: uniqueSorted(env.system_packages),
    requirements: uniqueSorted(env.requirements),
    ...(runner === "node-test" ? { node: true as const } : {}),
  };
}

/** One line for progress and `lmr env list`: "debian:bookworm, python 3.11, 2 system packages, 3 requirements". */
export function describeSpec(s: EnvSpec): string {
  const n = (k: number, what: string): string => `${k} ${what}${k === 1 ? "" : "s"}`;
  const node = s.node ? `node ${DEBIAN_NODE[s.base] ?? "?"} (Debian nodejs), ` : "";
  return `${s.base}, ${node}python ${s.python}, ${n(s.system_packages.length, "system package")}, ${n(s.requirements.length, "requirement")}`;
}

/** The variable that names a base's source image, e.g. LMR_BASE_IMAGE_DEBIAN_BOOKWORM, LMR_BASE_IMAGE_PYTHON_3_12_SLIM. */
export function baseImageVariable(base: string): string {
  return `LMR_BASE_IMAGE_${base.toUpperCase().replace(/[^A-Z0-9]+/g, "_")}`;
}
