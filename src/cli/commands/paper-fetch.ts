import type { Command } from "commander";
import { EXIT, LmrError, exitCodeFor, isLmrError, type Problem } from "../../core/errors.js";
import { displayPath } from "../../manifest/read.js";
import { findTaskDirs, loadTask } from "../../manifest/load.js";
import { fetchTaskPaper, type FetchResult } from "../../paper/fetch.js";
import { arxivBaseFrom, formatBytes } from "../../paper/pin.js";
import { papersDirFrom } from "../../paper/resolve.js";
import { action } from "../action.js";
import { printJsonFailed, printJsonOk } from "../output.js";

interface FetchFlags {
  tasksDir: string;
  papers?: string;
  arxivBase?: string;
  updateManifest?: boolean;
  json?: boolean;
}

/** `lmr paper fetch [TASK_DIR…]`: a subcommand of the `paper` group. */
export function registerPaperFetch(group: Command): void {
  group
    .command("fetch")
    .description("download each task's pinned paper PDF into the cache ($LMR_CACHE/papers/<sha256>.pdf)")
    .argument("[TASK_DIR...]", "task folders; default: every task under --tasks-dir")
    .option("--tasks-dir <DIR>", "folder whose subfolders are tasks", "tasks")
    .option("--papers <DIR>", "take the PDFs from this folder instead of downloading (offline); default $LMR_PAPERS")
    .option("--arxiv-base <URL>", "where arXiv PDFs are downloaded from; default $LMR_ARXIV_BASE, else https://arxiv.org/pdf/")
    .option("--update-manifest", "write paper.sha256 and paper.bytes into task.json where it has none (a text edit; layout kept)")
    .option("--json", "print one result per task as JSON")
    .addHelpText(
      "after",
      `
The PDF comes from paper.pdf_url, else from <arxiv base><paper.arxiv> (the id
with its version, e.g. 2305.18290v3). A download goes to a .part file, which a
rerun continues with an HTTP Range request; the result is checked against
paper.sha256/paper.bytes (when the manifest pins them) and renamed into place.
Cached papers are not downloaded again. With --papers DIR nothing is downloaded:
each PDF is taken from DIR, named <sha256>.pdf, <arXiv id with version>.pdf
(a legacy id's '/' as '_', e.g. hep-th_9901001v2.pdf) or <task id>.pdf, tried
in that order, checked, and copied into the cache. \`lmr build\` then puts the
paper in each workspace (paper.pdf, paper.md); it never downloads.
Exit codes: 0 every pinned paper is cached, 1 a PDF does not match its pin,
2 bad input (a manifest, a missing file in --papers, HTTP 404), 3 network or
file-system failure.

Examples:
  $ lmr paper fetch
  $ lmr paper fetch tasks/dpo-preference-loss --update-manifest
  $ lmr paper fetch --papers /data/papers --json`,
    )
    .action(action(runFetch));
}

async function runFetch(taskDirs: string[], flags: FetchFlags): Promise<number> {
  const dirs = taskDirs.length > 0 ? taskDirs : await findTaskDirs(flags.tasksDir);
  if (dirs.length === 0) {
    throw new LmrError({
      code: "usage/no-tasks",
      file: flags.tasksDir,
      message: "no task folders found",
      hint: "pass task folders as arguments or point --tasks-dir at a folder of tasks",
    });
  }
  const papersDir = papersDirFrom(flags.papers);
  const arxivBase = arxivBaseFrom(flags.arxivBase);
  if (!/^https?:\/\//.test(arxivBase)) {
    throw new LmrError({
      code: "paper/bad-arxiv-base",
      message: `--arxiv-base must be an http(s) URL, got '${arxivBase}'`,
      hint: "e.g. --arxiv-base https://export.arxiv.org/pdf/",
    });
  }
  const results: FetchResult[] = [];
  const failures: LmrError[] = [];
  let code: number = EXIT.ok;
  for (const dir of dirs) {
    try {
      const task = await loadTask(dir);
      const owner = { id: task.manifest.id, manifestPath: task.manifestPath, paper: task.manifest.paper };
      const r = await fetchTaskPaper(owner, {
        arxivBase,
        ...(papersDir !== undefined ? { papersDir } : {}),
        ...(flags.updateManifest ? { updateManifest: true } : {}),
      });
      results.push(r);
      if (!flags.json) process.stdout.write(`${describe(r)}\n`);
    } catch (err) {
      if (!isLmrError(err)) throw err;
      failures.push(err);
      code = Math.max(code, exitCodeFor(err));
      if (!flags.json) process.stderr.write(`lmr: ${err.format()}\n`);
    }
  }
  if (flags.json) {
    const problems: Problem[] = failures.map((e) => ({ file: e.file, pointer: e.pointer, message: e.message, hint: e.hint }));
    // the envelope's error is the failure that decided the exit code; every failure is in data.problems
    const worst = failures.find((e) => exitCodeFor(e) === code);
    if (worst) printJsonFailed("paper fetch", worst, { papers: results, problems });
    else printJsonOk("paper fetch", { papers: results, problems });
  }
  return code;
}

function describe(r: FetchResult): string {
  const task = displayPath(r.manifest).replace(/\/task\.json$/, "");
  if (r.status === "not-pinned") return `${task}: no PDF pinned (set paper.arxiv or paper.pdf_url); nothing to fetch`;
  const what = `${formatBytes(r.bytes!)}, sha256 ${r.sha256!.slice(0, 12)}…`;
  const how =
    r.status === "downloaded"
      ? `downloaded ${r.url}${r.resumed_from !== undefined ? ` (resumed at byte ${r.resumed_from})` : ""}`
      : r.status === "cached"
        ? "cached"
        : "copied from the papers folder";
  const pin = r.manifest_updated ? "; pinned sha256/bytes in task.json" : !r.pinned ? " (task.json pins no sha256 yet: --update-manifest writes it)" : "";
  return `${task}: ${how} → ${displayPath(r.path!)} (${what})${pin}`;
}
