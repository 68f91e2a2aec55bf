import { readFile, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { mkdir } from "node:fs/promises";
import { LmrError } from "../core/errors.js";
import { writeFileAtomic } from "../core/fs-atomic.js";
import { checkRelativePath, toolkitPath } from "../core/paths.js";

const require = createRequire(import.meta.url);
const { name: PACKAGE, version: VERSION } = require("../../package.json") as { name: string; version: string };

/** The workflow template `lmr ci init` renders (GitHub Actions, for a repository holding tasks/). */
const CI_TEMPLATE = toolkitPath("templates", "ci", "lmr-dataset.yml");
export const DEFAULT_WORKFLOW = ".github/workflows/lmr-dataset.yml";
/** Mondays 03:17 UTC: off the hour, when GitHub's scheduled runs crowd. */
export const DEFAULT_CRON = "17 3 * * 1";

export interface CiWorkflowOptions {
  /** The tasks folder, relative to the repository root. */
  tasksDir?: string;
  /** What `npm install -g` installs in the jobs (default: this lmr, `lmr@<version>`). */
  install?: string;
  /** When the scheduled jobs (paper pins, full re-verification) run: five cron fields. */
  cron?: string;
  nodeVersion?: string;
}

/**
 * The workflow text. The template's placeholders are __LMR_NAME__ rather than lmr's usual
 * {{name}}, which GitHub's own ${{ }} expressions would collide with; each value is
 * checked so that it cannot break out of its YAML string.
 */
async function renderCiWorkflow(opts: CiWorkflowOptions = {}): Promise<string> {
  const values: Record<string, string> = {
    TASKS_DIR: checkTasksDir(opts.tasksDir ?? "tasks"),
    INSTALL: checkPlain("--install", opts.install ?? `${PACKAGE}@${VERSION}`, "e.g. --install lmr@0.2.0, or a tarball or git URL npm can install"),
    CRON: checkCron(opts.cron ?? DEFAULT_CRON),
    NODE_VERSION: checkPlain("--node", opts.nodeVersion ?? "20", "e.g. --node 20"),
  };
  const template = await readFile(CI_TEMPLATE, "utf8");
  const out = template.replace(/__LMR_([A-Z_]+?)__/g, (whole, name: string) => {
    const v = values[name];
    if (v === undefined) throw new LmrError({ code: "ci/bad-template", file: CI_TEMPLATE, message: `unknown placeholder ${whole}`, hint: "reinstall lmr" });
    return v;
  });
  return out;
}

/** Writes the workflow; an existing file stays unless `force`. */
export async function writeCiWorkflow(out: string, opts: CiWorkflowOptions & { force?: boolean } = {}): Promise<{ path: string; replaced: boolean }> {
  const text = await renderCiWorkflow(opts);
  const existing = await stat(out).catch(() => undefined);
  if (existing && !opts.force) {
    throw new LmrError({
      code: "ci/exists",
      file: out,
      message: "the workflow file exists already; it was left as it is",
      hint: "pass --force to write it anew (your edits to it are lost), or --out another file",
    });
  }
  if (existing?.isDirectory())
    throw new LmrError({ code: "ci/out-is-folder", file: out, message: "is a folder", hint: "name a file, e.g. --out .github/workflows/lmr-dataset.yml" });
  await mkdir(dirname(out), { recursive: true });
  await writeFileAtomic(out, text);
  return { path: out, replaced: existing !== undefined };
}

function checkTasksDir(dir: string): string {
  const trimmed = dir.replace(/\/+$/, "");
  const problem = checkRelativePath(trimmed);
  if (problem !== undefined)
    throw new LmrError({
      code: "ci/bad-tasks-dir",
      message: `--tasks-dir ${problem}: '${dir}'`,
      hint: "the tasks folder relative to the repository root, e.g. --tasks-dir tasks",
    });
  return checkPlain("--tasks-dir", trimmed, "e.g. --tasks-dir tasks");
}

/** A value that goes inside a double-quoted YAML string and a shell word: no quotes, backslashes, '$', '`' or line breaks. */
function checkPlain(flag: string, value: string, hint: string): string {
  if (value.trim() === "" || /["'\\$`\n\r]/.test(value)) {
    throw new LmrError({
      code: "ci/bad-value",
      message: `${flag} must be non-empty and hold no quotes, backslashes, '$', '\`' or line breaks, got '${value}'`,
      hint,
    });
  }
  return value.trim();
}

function checkCron(cron: string): string {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5 || !fields.every((f) => /^[0-9*,/\-A-Za-z]+$/.test(f))) {
    throw new LmrError({
      code: "ci/bad-cron",
      message: `--cron must be five cron fields (minute hour day month weekday), got '${cron}'`,
      hint: `e.g. --cron "${DEFAULT_CRON}" (Mondays 03:17 UTC)`,
    });
  }
  return fields.join(" ");
}
