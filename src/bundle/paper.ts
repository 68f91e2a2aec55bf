import { copyFile, lstat, readFile } from "node:fs/promises";
import { join } from "node:path";
import { LmrError, isLmrError } from "../core/errors.js";
import { writeFileAtomic } from "../core/fs-atomic.js";
import { sha256 } from "../core/hash.js";
import type { ResolvedTask } from "../manifest/types.js";
import { extractPaper, readPaperPages } from "../paper/extract.js";
import { toMarkdown } from "../paper/markdown.js";
import { pinsPdf } from "../paper/pin.js";
import { papersDirFrom, resolvePaperPdf } from "../paper/resolve.js";

/*
 * The paper in the workspace: paper.pdf (the pinned PDF) and paper.md (its
 * text, a `## Page N` section per page) at the root. The build never
 * downloads: the PDF comes from the papers folder or the cache that
 * `lmr paper fetch` fills. A task with its own paper text (paper.json, only
 * our example and fixture papers) gets paper.md from that text.
 */

const WORKSPACE_PAPER_PDF = "paper.pdf";
const WORKSPACE_PAPER_MD = "paper.md";
/** Workspace files that hold the paper; the leak scan and the workspace hash leave them out. */
export const WORKSPACE_PAPER_FILES: readonly string[] = [WORKSPACE_PAPER_PDF, WORKSPACE_PAPER_MD];

/** bundle.json "paper": what went into the workspace. */
export interface BundlePaper {
  /** Where it came from: the lmr cache, the papers folder, or the task's own paper.json. */
  source: "cache" | "papers-dir" | "task";
  /** Workspace files written. */
  files: string[];
  /** sha256 and size of the PDF (or, for source "task", of paper.json). */
  sha256: string;
  bytes: number;
  pages: number;
  /** sha256 of paper.md. */
  markdown_sha256: string;
  /** The manifest pins sha256/bytes of this PDF. */
  pinned?: boolean;
}

export interface PaperBundleOptions {
  /** Folder of PDFs (default $LMR_PAPERS). */
  papers?: string;
  cacheDir?: string;
  /** A missing paper is an error naming the task (default: $LMR_REQUIRE_PAPER=1, else a warning). */
  requirePaper?: boolean;
}

export interface PaperOutcome {
  paper?: BundlePaper;
  /** One line per problem, for bundle.json "warnings" and the build's output. */
  warnings: string[];
}

/** Writes paper.pdf / paper.md into `workspace` when the paper is available; says why not otherwise. */
export async function addPaperToWorkspace(task: ResolvedTask, workspace: string, opts: PaperBundleOptions = {}): Promise<PaperOutcome> {
  const { paper } = task.manifest;
  const pinned = pinsPdf(paper);
  const require = opts.requirePaper ?? process.env.LMR_REQUIRE_PAPER === "1";
  if (!pinned && paper.text === undefined) {
    if (require)
      throw missing(task, "task.json pins no paper PDF", 'add "arxiv" (the id with its version) or "pdf_url" to the paper section, then run `lmr paper fetch`');
    return { warnings: [] };
  }
  // checked whether or not the paper is here, so every machine builds the same workspace or fails the same way
  for (const name of WORKSPACE_PAPER_FILES) await refuseClash(task, workspace, name);

  const papersDir = papersDirFrom(opts.papers);
  const pdf = pinned
    ? await resolvePaperPdf(
        { id: task.manifest.id, manifestPath: task.manifestPath, paper },
        { ...(papersDir !== undefined ? { papersDir } : {}), ...(opts.cacheDir ? { cacheDir: opts.cacheDir } : {}) },
      )
    : undefined;
  const warnings: string[] = [];
  if (pdf) {
    const pages = await readPages(task, async () => (await extractPaper(pdf.path)).pages);
    await copyFile(pdf.path, join(workspace, WORKSPACE_PAPER_PDF));
    const md = toMarkdown(pages, paper.title);
    await writeFileAtomic(join(workspace, WORKSPACE_PAPER_MD), md);
    return {
      paper: {
        source: pdf.source,
        files: [...WORKSPACE_PAPER_FILES],
        sha256: pdf.sha256,
        bytes: pdf.bytes,
        pages: Object.keys(pages).length,
        markdown_sha256: sha256(md),
        pinned: pdf.pinned,
      },
      warnings,
    };
  }
  const where = papersDir !== undefined ? `${papersDir} (--papers / LMR_PAPERS) or the paper cache` : "the paper cache";
  if (pinned) {
    const why = `the pinned PDF is not in ${where}`;
    if (require) throw missing(task, why, `run \`lmr paper fetch ${task.dir}\`, or give --papers DIR with the PDF`);
    warnings.push(
      `${task.manifest.id}: paper not in the workspace: ${why} (run \`lmr paper fetch\`)${paper.text !== undefined ? "; paper.md comes from the task's paper text" : ""}`,
    );
  }
  if (paper.text !== undefined) {
    const file = join(task.dir, paper.text);
    const pages = await readPages(task, async () => (await readPaperPages(file)).pages);
    const md = toMarkdown(pages, paper.title);
    await writeFileAtomic(join(workspace, WORKSPACE_PAPER_MD), md);
    const raw = await readFile(file);
    return {
      paper: {
        source: "task",
        files: [WORKSPACE_PAPER_MD],
        sha256: sha256(raw),
        bytes: raw.length,
        pages: Object.keys(pages).length,
        markdown_sha256: sha256(md),
      },
      warnings,
    };
  }
  return { warnings };
}

async function refuseClash(task: ResolvedTask, workspace: string, name: string): Promise<void> {
  if (
    !(await lstat(join(workspace, name)).then(
      () => true,
      () => false,
    ))
  )
    return;
  throw new LmrError({
    code: "bundle/workspace-name-clash",
    file: task.manifestPath,
    pointer: "/paper",
    message: `the upstream tree already has a file '${name}' where the bundle puts the paper`,
    hint: `list '${name}' in workspace.remove, or set upstream.subdir to a folder without it`,
  });
}

async function readPages(task: ResolvedTask, read: () => Promise<Record<string, string>>): Promise<Record<string, string>> {
  try {
    return await read();
  } catch (err) {
    if (!isLmrError(err)) throw err;
    throw new LmrError({
      code: err.code,
      file: task.manifestPath,
      pointer: "/paper",
      message: `task ${task.manifest.id}: ${err.file ?? "the paper"}: ${err.message}`,
      hint: err.hint,
      cause: err,
    });
  }
}

function missing(task: ResolvedTask, why: string, hint: string): LmrError {
  return new LmrError({
    code: "paper/missing",
    file: task.manifestPath,
    pointer: "/paper",
    message: `task ${task.manifest.id}: paper required (--require-paper), but ${why}`,
    hint,
  });
}
