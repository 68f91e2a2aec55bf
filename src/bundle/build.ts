import { TOOLKIT_VERSION, toolkitHash } from "../core/toolkit-identity.js";
import { copyFile, lstat, mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { LmrError, isLmrError } from "../core/errors.js";
import { writeDirAtomic, writeJsonAtomic } from "../core/fs-atomic.js";
import { hashTree, sha256 } from "../core/hash.js";
import { DEFAULT_LEVEL, instructionPath } from "../manifest/level.js";
import type { ResolvedTask, Target } from "../manifest/types.js";
import { flavorOf, isTypedFlavor } from "../lang/ts-source.js";
import { maskerFor } from "../mask/registry.js";
import { TsMasker } from "../mask/ts/masker.js";
import { findTsconfig, openTypeCheck } from "../mask/ts/typecheck.js";
import { createTsTypeOracle } from "../mask/ts/types.js";
import type { MaskSpec } from "../mask/types.js";
import { applyPrepareSteps } from "../prepare/apply.js";
import { materializeUpstream } from "../source/materialize.js";
import { copyAlternatives } from "./alternatives.js";
import { scanWorkspace, type LeakReference } from "./leak-scan.js";
import { addPaperToWorkspace } from "./paper.js";
import { removeLeftovers } from "./remove-leftovers.js";
import { removeDeclaredPaths } from "./workspace-remove.js";
import { stripDeclaredText } from "./workspace-strip.js";
import { copyGraderFiles, hashTaskInputs } from "./task-inputs.js";
import { BUNDLE_FILES, BUNDLE_SCHEMA_VERSION, type BundleInfo, type BundleManifest, type BundleOptions, type BundleTarget } from "./types.js";

/** Names the bundle adds at the workspace root; an upstream file of the same name would be overwritten. */
const WORKSPACE_INSTRUCTION = "instruction.md";
const WORKSPACE_PAPER = "paper.json";

interface MaskedFiles {
  targets: BundleTarget[];
  /** Prepared, unmasked content by target file. */
  originals: Map<string, Buffer>;
  /** The masked spans' reference texts, one entry per target file. */
  references: LeakReference[];
}

/**
 * Builds `outDir/<task id>/` for one task: `workspace/` (upstream, prepared,
 * targets masked, leftovers removed, instruction added), `reference/` (the
 * unmasked target files), `grader/` (tests and fixtures) and `bundle.json`.
 * The folder appears complete or not at all; an older bundle is replaced.
 */
export async function buildBundle(task: ResolvedTask, outDir: string, opts: BundleOptions = {}): Promise<BundleInfo> {
  const m = task.manifest;
  const dir = join(resolve(outDir), m.id);
  const level = opts.level ?? DEFAULT_LEVEL;
  const levelInstruction = instructionPath(task, level);
  let info: BundleInfo | undefined;
  await writeDirAtomic(dir, async (tmp) => {
    const workspace = join(tmp, BUNDLE_FILES.workspace);
    const reference = join(tmp, BUNDLE_FILES.reference);
    const grader = join(tmp, BUNDLE_FILES.grader);

    const source = await materializeUpstream(task, workspace, opts);
    if (m.prepare && m.prepare.length > 0) await applyPrepareSteps(workspace, m.prepare, { file: task.manifestPath });

    const masked = await maskTargets(task, workspace, reference);
    const stripped = await stripDeclaredText(task, workspace);
    const removed = [
      ...(await removeDeclaredPaths(task, workspace, masked.originals)),
      ...(await removeLeftovers(workspace, { targets: masked.originals, preparedFrom: notebookSources(task, masked.originals) })),
    ];
    await addTaskText(task, workspace);
    await mkdir(grader, { recursive: true });
    await copyGraderFiles(task, grader);
    const alternatives = await copyAlternatives(task.dir, workspace, m.targets, join(tmp, BUNDLE_FILES.alternatives));

    const allowed = (m.verification?.allowed_leaks ?? []).map((a) => ({ file: a.file }));
    const { leaks } = await scanWorkspace(workspace, masked.references, { allowed });

    const [ws, ref, gr] = await Promise.all([hashTree(workspace), hashTree(reference), hashTree(grader)]);
    // The paper goes in after hashing on purpose: verification.json compares workspace hashes across
    // machines, and one without the paper must get the same hash; bundle.json records the paper apart.
    const paper = await addPaperToWorkspace(task, workspace, opts);
    // Likewise the level: the hash is the paper level's, so a result graded from a hinted bundle has
    // the grading key of the same submission graded from a paper one (the tests are the same).
    if (level !== "paper") await copyFile(levelInstruction, join(workspace, WORKSPACE_INSTRUCTION));
    await notePaperAbsence(task, workspace, paper.paper?.files ?? []);
    const graderHash = combineGraderHash(gr.hash, alternatives.length === 0 ? undefined : (await hashTree(join(tmp, BUNDLE_FILES.alternatives))).hash);
    const manifest: BundleManifest = {
      schema_version: BUNDLE_SCHEMA_VERSION,
      task_id: m.id,
      toolkit_version: TOOLKIT_VERSION,
      toolkit_hash: toolkitHash(),
      built_at: (opts.now?.() ?? new Date()).toISOString(),
      upstream: {
        location: source.location,
        origin: source.origin,
        commit: source.commit ?? null,
        ...(source.missing && source.missing.length > 0 ? { missing: source.missing } : {}),
      },
      level,
      targets: masked.targets,
      alternatives: alternatives.map((a) => a.name),
      hashes: { task: await hashTaskInputs(task), workspace: ws.hash, reference: ref.hash, grader: graderHash },
      removed,
      ...(stripped.length > 0 ? { stripped } : {}),
      leaks,
      ...(paper.paper ? { paper: paper.paper } : {}),
      ...(paper.warnings.length > 0 ? { warnings: paper.warnings } : {}),
    };
    await writeJsonAtomic(join(tmp, BUNDLE_FILES.manifest), manifest);
    const count = (h: { files: Record<string, string> }): number => Object.keys(h.files).length;
    info = { ...manifest, dir, files: { workspace: count(ws) + (paper.paper?.files.length ?? 0), reference: count(ref), grader: count(gr) } };
  });
  return info!;
}

/** One symbol to mask: a target (graded, reference kept) or a workspace.mask entry (masked only). */
interface MaskItem {
  spec: MaskSpec;
  /** Index in `targets`, or in `workspace.mask` for an extra. */
  index: number;
  extra: boolean;
}

/**
 * Masks every target (and every workspace.mask symbol), one masker call per
 * file, and keeps the unmasked target files under `referenceDir`.
 */
async function maskTargets(task: ResolvedTask, workspace: string, referenceDir: string): Promise<MaskedFiles> {
  const byFile = new Map<string, MaskItem[]>();
  const add = (file: string, item: MaskItem): void => {
    byFile.set(file, [...(byFile.get(file) ?? []), item]);
  };
  task.manifest.targets.forEach((target: Target, index) => {
    const spec: MaskSpec = {
      symbol: target.symbol,
      mode: target.mode,
      ...(target.line !== undefined ? { line: target.line } : {}),
      ...(target.region !== undefined ? { region: target.region } : {}),
    };
    add(target.file, { spec, index, extra: false });
  });
  (task.manifest.workspace?.mask ?? []).forEach((m, index) => add(m.file, { spec: { symbol: m.symbol, mode: m.mode ?? "body" }, index, extra: true }));

  const out: MaskedFiles = { targets: [], originals: new Map(), references: [] };
  const rows: { index: number; row: BundleTarget }[] = [];
  for (const [file, group] of byFile) {
    const first = group[0]!;
    const pointer = first.extra ? `/workspace/mask/${first.index}` : `/targets/${first.index}`;
    const original = await readTargetFile(task, workspace, file, pointer);
    let result;
    try {
      const masker = maskerFor(file);
      const specs = group.map((g) => g.spec);
      // as `lmr mask` does: a .ts/.tsx file under a tsconfig.json of the workspace is masked with the
      // type checker, so its stub keeps the type callers inferred from the body (src/mask/ts/types.ts)
      const abs = join(workspace, file);
      const tsconfig = masker instanceof TsMasker && isTypedFlavor(flavorOf(file, "js")) ? findTsconfig(abs, workspace) : undefined;
      const project = tsconfig === undefined ? undefined : await openTypeCheck(abs, tsconfig);
      result =
        masker instanceof TsMasker && project
          ? await masker.mask(original.toString("utf8"), specs, file, { types: createTsTypeOracle(project.morph, project.project, project.file) })
          : await masker.mask(original.toString("utf8"), specs, file);
    } catch (err) {
      throw inTask(err, task, pointer, file);
    }
    await writeFile(join(workspace, file), result.source);
    const isTargetFile = group.some((g) => !g.extra);
    if (isTargetFile) {
      await mkdir(dirname(join(referenceDir, file)), { recursive: true });
      await writeFile(join(referenceDir, file), original);
      out.originals.set(file, original);
    }
    const refs: LeakReference = { file, bodies: [], targets: [] };
    result.targets.forEach((t, i) => {
      const item = group[i]!;
      if (!item.extra) rows.push({ index: item.index, row: { file, symbol: t.symbol, mode: t.mode, start_line: t.start_line, end_line: t.end_line } });
      for (const text of t.reference) {
        refs.bodies.push(text);
        refs.targets!.push(`${file}::${t.symbol}`);
      }
    });
    out.references.push(refs);
  }
  out.targets = rows.sort((a, b) => a.index - b.index).map((r) => r.row);
  return out;
}

async function readTargetFile(task: ResolvedTask, workspace: string, file: string, pointer: string): Promise<Buffer> {
  const path = join(workspace, file);
  const info = await lstat(path).catch(() => undefined);
  if (info && !info.isFile()) {
    // the masked text is written back to this path: never through a symlink, never onto a folder
    throw new LmrError({
      code: "task/target-not-regular-file",
      file: task.manifestPath,
      pointer: `${pointer}/file`,
      message: `target file '${file}' is ${info.isSymbolicLink() ? "a symbolic link" : "not a regular file"} in the upstream tree`,
      hint: "name the file the link points to instead",
    });
  }
  try {
    return await readFile(path);
  } catch (err) {
    const made = (task.manifest.prepare ?? []).length > 0 ? " after the prepare steps" : "";
    throw new LmrError({
      code: "task/target-file-missing",
      file: task.manifestPath,
      pointer: `${pointer}/file`,
      message: `target file '${file}' is not in the upstream tree${made} (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
      hint: "the path is relative to the upstream root (or its subdir); check it at the pinned commit",
      cause: err,
    });
  }
}

/** The masker reports positions inside the target file; say which task and manifest entry it was. */
function inTask(err: unknown, task: ResolvedTask, pointer: string, file: string): unknown {
  if (!isLmrError(err)) return err;
  const where = err.pointer ? ` (${err.pointer})` : "";
  return new LmrError({ code: err.code, file: task.manifestPath, pointer, message: `${file}${where}: ${err.message}`, hint: err.hint, cause: err });
}

/** Notebooks that a notebook-to-module step turned into a target module: the reference in another form. */
function notebookSources(task: ResolvedTask, targets: ReadonlyMap<string, Buffer>): Map<string, string> {
  const out = new Map<string, string>();
  for (const step of task.manifest.prepare ?? []) {
    if (step.kind === "notebook-to-module" && targets.has(step.out)) out.set(step.notebook, step.out);
  }
  return out;
}

/** Instruction (and paper text) at the workspace root, refusing to overwrite an upstream file. */
async function addTaskText(task: ResolvedTask, workspace: string): Promise<void> {
  const m = task.manifest;
  const items: [string, string, string][] = [[m.instruction, WORKSPACE_INSTRUCTION, "/instruction"]];
  if (m.paper.text !== undefined) items.push([m.paper.text, WORKSPACE_PAPER, "/paper/text"]);
  for (const [from, name, pointer] of items) {
    const to = join(workspace, name);
    if (
      await lstat(to).then(
        () => true,
        () => false,
      )
    ) {
      throw new LmrError({
        code: "bundle/workspace-name-clash",
        file: task.manifestPath,
        pointer,
        message: `the upstream tree already has a file '${name}' where the bundle puts the task's ${name === WORKSPACE_PAPER ? "paper text" : "instruction"}`,
        hint: "set upstream.subdir to a folder without it, or rename the upstream file in a prepare step",
      });
    }
    await copyFile(join(task.dir, from), to);
  }
}

const PAPER_FILE_MENTION = /\bpaper\.(md|pdf)\b/;

/**
 * An instruction may say the paper is in paper.md / paper.pdf; a workspace built without them
 * (no PDF in the cache, no network to fetch one) must not send the solver looking for files that
 * are not there: the instruction then opens with a note naming what is missing and where the
 * paper is. Added after hashing, as the paper itself is.
 */
async function notePaperAbsence(task: ResolvedTask, workspace: string, present: readonly string[]): Promise<void> {
  const file = join(workspace, WORKSPACE_INSTRUCTION);
  const text = await readFile(file, "utf8");
  const named = [...new Set([...text.matchAll(new RegExp(PAPER_FILE_MENTION, "g"))].map((m) => `paper.${m[1]}`))].sort();
  const absent = named.filter((f) => !present.includes(f));
  if (absent.length === 0) return;
  const p = task.manifest.paper;
  const where = p.arxiv ? `arXiv ${p.arxiv} (https://arxiv.org/abs/${p.arxiv})` : (p.url ?? p.pdf_url ?? "its published version");
  const note = `> **Note.** This workspace was built without ${absent.map((f) => `\`${f}\``).join(" and ")}, which the instruction below mentions: read the paper, *${p.title}*, from ${where}. Everything else is as described.\n\n`;
  await writeFile(file, note + text);
}

/** bundle.json's grader hash: the grader tree's, covering the alternatives beside it when the task has any. */
export function combineGraderHash(graderTree: string, alternativesTree: string | undefined): string {
  return alternativesTree === undefined ? graderTree : sha256(`grader ${graderTree}\nalternatives ${alternativesTree}\n`);
}
