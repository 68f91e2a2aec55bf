import { lstat, readFile, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { LmrError } from "../core/errors.js";
import { writeFileAtomic } from "../core/fs-atomic.js";
import { checkRelativePath, isInsideReal } from "../core/paths.js";
import type { PrepareStep } from "../manifest/types.js";
import { extractFunction } from "./extract-function.js";
import { convertNotebook } from "./notebook.js";
import type { PrepareContext, PrepareReport, PrepareStepReport } from "./types.js";

/**
 * Apply the manifest's prepare steps, in order, to a materialized upstream
 * tree. Each failure is an LmrError naming the step: pointer /prepare/<i>,
 * message "prepare step <i> (<kind>): ...".
 */
export async function applyPrepareSteps(treeDir: string, steps: readonly PrepareStep[], ctx: PrepareContext): Promise<PrepareReport> {
  const reports: PrepareStepReport[] = [];
  for (const [index, step] of steps.entries()) {
    try {
      reports.push(await applyStep(treeDir, step, index));
    } catch (err) {
      throw stepError(err, index, step, ctx);
    }
  }
  return { steps: reports };
}

async function applyStep(treeDir: string, step: PrepareStep, index: number): Promise<PrepareStepReport> {
  if (step.kind === "notebook-to-module") {
    const nbPath = await insideTree(treeDir, step.notebook, "/notebook", true);
    const outPath = await insideTree(treeDir, step.out, "/out", false);
    const mod = await convertNotebook(await readFile(nbPath, "utf8"), step.notebook, step.cells);
    await writeFileAtomic(outPath, mod.source);
    return { index, kind: step.kind, file: step.out, cells: mod.cells, dropped_lines: mod.dropped_lines, dropped_cells: mod.dropped_cells };
  }
  if (step.kind === "extract-function") {
    const path = await insideTree(treeDir, step.file, "/file", true);
    const r = await extractFunction(await readFile(path, "utf8"), step);
    await writeFileAtomic(path, r.source);
    return {
      index,
      kind: step.kind,
      file: step.file,
      start_line: r.start_line,
      end_line: r.end_line,
      def_line: r.def_line,
      call: r.call,
      ...(r.guarded ? { guarded: r.guarded } : {}),
    };
  }
  const kind = (step as { kind?: unknown }).kind;
  throw new LmrError({
    code: "prepare/kind-unknown",
    message: `unknown step kind ${JSON.stringify(kind)}`,
    pointer: "/kind",
    hint: "use notebook-to-module or extract-function",
  });
}

/** Absolute path of a step's file, refusing paths that leave the tree (`..`, absolute, escaping symlinks). */
async function insideTree(treeDir: string, rel: string, pointer: string, mustExist: boolean): Promise<string> {
  const why = checkRelativePath(rel);
  if (why) throw new LmrError({ code: "prepare/path-invalid", message: `'${rel}': ${why}`, pointer, hint: "paths are relative to the upstream tree root" });
  const abs = join(treeDir, rel);
  const exists = await stat(abs).then(
    (s) => s.isFile(),
    () => false,
  );
  if (mustExist && !exists)
    throw new LmrError({
      code: "prepare/file-missing",
      message: `'${rel}' is not a file in the upstream tree`,
      pointer,
      hint: "check the path at the pinned commit (after upstream.subdir and earlier steps)",
    });
  if (!(await isInsideReal(treeDir, await nearestExisting(abs)))) {
    throw new LmrError({ code: "prepare/path-invalid", message: `'${rel}' resolves outside the upstream tree (symlink)`, pointer });
  }
  return abs;
}

function stepError(err: unknown, index: number, step: PrepareStep, ctx: PrepareContext): LmrError {
  const prefix = `prepare step ${index} (${step.kind})`;
  if (err instanceof LmrError) {
    return new LmrError({
      code: err.code,
      message: `${prefix}: ${err.message}`,
      file: ctx.file,
      pointer: `/prepare/${index}${err.pointer ?? ""}`,
      hint: err.hint,
      cause: err,
    });
  }
  return new LmrError({
    code: "prepare/io",
    message: `${prefix}: ${(err as Error).message ?? String(err)}`,
    file: ctx.file,
    pointer: `/prepare/${index}`,
    cause: err,
  });
}

/** `p`, or its nearest ancestor that exists (where a new file's folder chain starts). */
async function nearestExisting(p: string): Promise<string> {
  for (let cur = p; ; cur = dirname(cur)) {
    const ok = await lstat(cur).then(
      () => true,
      () => false,
    );
    if (ok || dirname(cur) === cur) return cur;
  }
}
