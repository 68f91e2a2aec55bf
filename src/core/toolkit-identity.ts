import { createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { toolkitPath } from "./paths.js";

const require = createRequire(import.meta.url);

/** package.json's version: what a release says. It does not change between releases; the hash does. */
export const TOOLKIT_VERSION = (require("../../package.json") as { version: string }).version;

/**
 * The code that decides outcomes, relative to the toolkit's root: both harnesses and the bridge,
 * the record/replay helpers, and the built masker, bundle builder, interpreter and image
 * resolution (env/), runner, grader, verify steps and the fixture check and low-precision scan
 * they call (record/). A change to any file here (one line of the Python harness, a masker
 * fix) is a new toolkit identity: verification records and grading results made by another
 * one are not reused.
 */
const IDENTITY_ROOTS = [
  "python",
  "node/lmr-harness",
  "dist/mask",
  "dist/prepare",
  "dist/bundle",
  "dist/env",
  "dist/runner",
  "dist/record",
  "dist/evaluate",
  "dist/verify",
  "dist/lang",
] as const;

function skip(name: string, isDir: boolean): boolean {
  if (isDir) return name === "__pycache__" || name === "node_modules" || name.startsWith(".");
  return name.endsWith(".pyc") || name.endsWith(".map") || name.endsWith(".d.ts") || name.endsWith(".test.js");
}

function collect(dir: string, rel: string, out: string[]): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    if (skip(e.name, e.isDirectory())) continue;
    const r = `${rel}/${e.name}`;
    if (e.isDirectory()) collect(join(dir, e.name), r, out);
    else if (e.isFile()) out.push(r);
  }
}

let memo: string | undefined;

/**
 * sha256 over the identity roots' files (sorted paths and contents): the same on every machine
 * with the same checkout and build. Computed once per process (~10 ms).
 */
export function toolkitHash(): string {
  if (memo !== undefined) return memo;
  const files: string[] = [];
  for (const root of IDENTITY_ROOTS) collect(toolkitPath(...root.split("/")), root, files);
  files.sort();
  const h = createHash("sha256");
  for (const f of files) {
    h.update(f).update("\0");
    h.update(readFileSync(toolkitPath(...f.split("/")))).update("\0");
  }
  memo = h.digest("hex");
  return memo;
}

/** Version and hash as one string, for reuse keys: `0.2.0+<12 hex>`. */
export function toolkitIdentity(): string {
  return `${TOOLKIT_VERSION}+${toolkitHash().slice(0, 12)}`;
}
