import { open, readdir } from "node:fs/promises";
import { join, posix } from "node:path";
import type { Finding } from "./schema-errors.js";
import { asObject } from "./semantic.js";

/*
 * A paper never enters a task: the PDF is pinned by its hash (paper.arxiv /
 * paper.pdf_url, paper.sha256) and comes from the paper cache or a papers
 * folder when a workspace is built. Only example tasks over a local upstream
 * (our own code, with a "paper" we wrote) may ship text through paper.text.
 * These checks find what would leak: paper.text beside a URL upstream, and any
 * PDF or paper-text file in the task folder.
 */

/** Bounds the walk through a task folder that is unexpectedly big. */
const MAX_WALK = 20_000;
const PDF_MAGIC = "%PDF-";
/** Folders that are never part of a task's committed content. */
const SKIP_DIRS = new Set([".git", "node_modules", "__pycache__", ".pytest_cache"]);
/** Names under which a paper's text gets saved: paper.json (LMR-Bench's shape), paper.md (lmr paper extract), … */
const PAPER_TEXT_NAME = /^(paper|paper[-_]text|fulltext|full[-_]text)\.(json|md|markdown|txt|tex)$/i;

const PIN_HINT =
  "pin the PDF instead (`lmr paper fetch --update-manifest TASK_DIR`, or `lmr new --paper-pdf FILE`): builds take it from the paper cache or --papers DIR";

export async function checkPaperLeaks(data: unknown, taskDir: string): Promise<Finding[]> {
  const m = asObject(data);
  const paper = asObject(m?.paper);
  const upstream = asObject(m?.upstream);
  const urlUpstream = typeof upstream?.repo === "string" ? upstream.repo : undefined;
  const text = typeof paper?.text === "string" ? posix.normalize(paper.text) : undefined;
  const findings: Finding[] = [];
  if (text !== undefined && urlUpstream !== undefined) {
    findings.push({
      pointer: "/paper/text",
      message: `paper.text ships '${text}', the paper's text, with a task whose upstream is a repository URL (${urlUpstream}): a real paper's text never enters the task`,
      hint: `delete ${text} and remove paper.text; ${PIN_HINT}`,
    });
  }
  // the declared text of a local (example) upstream is allowed; beside a URL upstream it is reported above
  const allowed = text !== undefined ? text : undefined;
  for (const file of await listFiles(taskDir)) {
    if (file.rel === allowed) continue;
    if (file.pdf) {
      findings.push({
        pointer: "/paper",
        message: `'${file.rel}' is a PDF in the task folder: papers (and other PDFs) are never committed with a task`,
        hint: `delete ${file.rel}; ${PIN_HINT}`,
      });
    } else if (PAPER_TEXT_NAME.test(posix.basename(file.rel))) {
      findings.push({
        pointer: "/paper",
        message: `'${file.rel}' looks like the paper's text (a file named ${posix.basename(file.rel)}) in the task folder`,
        hint: `delete ${file.rel}: the workspace gets paper.md from the pinned PDF. Only an example over a local upstream may ship text it wrote, named by paper.text`,
      });
    }
  }
  return findings;
}

async function listFiles(taskDir: string): Promise<{ rel: string; pdf: boolean }[]> {
  const out: { rel: string; pdf: boolean }[] = [];
  const queue = [""];
  let seen = 0;
  while (queue.length > 0 && seen < MAX_WALK) {
    const rel = queue.shift()!;
    const entries = await readdir(join(taskDir, rel), { withFileTypes: true }).catch(() => []);
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      seen++;
      const child = rel === "" ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (!SKIP_DIRS.has(e.name)) queue.push(child);
      } else if (e.isFile()) {
        out.push({ rel: child, pdf: /\.pdf$/i.test(e.name) || (await startsWithPdfMagic(join(taskDir, child))) });
      }
    }
  }
  return out;
}

async function startsWithPdfMagic(path: string): Promise<boolean> {
  const handle = await open(path, "r").catch(() => undefined);
  if (!handle) return false;
  try {
    const buf = Buffer.alloc(1024);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    return buf.subarray(0, bytesRead).toString("latin1").includes(PDF_MAGIC);
  } finally {
    await handle.close();
  }
}
