import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { LmrError } from "../core/errors.js";
import { buildFingerprints, findCopies, type Fingerprints, type TextMatch } from "./leak-fingerprint.js";
import { WORKSPACE_PAPER_FILES } from "./paper.js";

type LeakKind = "copy" | "bytecode" | "notebook" | "git" | "checkpoint";

export interface Leak {
  /** Workspace-relative, POSIX separators. */
  file: string;
  /** 1-based; for a notebook, the line inside the cell. */
  line?: number;
  /** Notebooks: index of the cell in the notebook's `cells` array. */
  cell?: number;
  kind: LeakKind;
  /** Which reference body leaked, when one is known. */
  target?: string;
  detail: string;
  /** The file is in the allowed list: shown, not counted against the task. */
  allowed?: boolean;
}

export interface LeakReference {
  /** Workspace-relative path of the masked target file. */
  file: string;
  /** Reference text of each masked span. */
  bodies: string[];
  /** Optional names of the bodies (same order), used in reports; default `file#<n>`. */
  targets?: string[];
}

export interface LeakScanOptions {
  /** Consecutive distinctive body lines that make a copy (default 3). */
  minLines?: number;
  /** Files (or folders) whose leaks are reported with `allowed: true`; with `task`, only leaks of that sibling task's reference. */
  allowed?: { file: string; task?: string }[];
}

export interface LeakScanResult {
  leaks: Leak[];
  /** Text files whose content was scanned. */
  scanned: number;
  skipped: { binary: number; tooLarge: string[] };
}

const MAX_BYTES = 2 * 1024 * 1024;
const SNIFF_BYTES = 8192;
const CHECKPOINT_FILE = /(\.orig|\.bak|~)$/;
const BYTECODE_FILE = /\.py[co]$/;

/** Leaks of the reference bodies in a workspace; see `scanWorkspace` for counts of what was skipped. */
export async function scanLeaks(workspaceDir: string, references: LeakReference[], opts: LeakScanOptions = {}): Promise<Leak[]> {
  return (await scanWorkspace(workspaceDir, references, opts)).leaks;
}

/**
 * One pass over the workspace: `.git` anywhere, compiled Python, checkpoint and backup copies,
 * and copies of reference bodies in every text file and notebook (the masked file included).
 * Binary files and files over 2 MB are skipped and counted.
 */
export async function scanWorkspace(workspaceDir: string, references: LeakReference[], opts: LeakScanOptions = {}): Promise<LeakScanResult> {
  const minLines = opts.minLines ?? 3;
  if (!Number.isInteger(minLines) || minLines < 1) {
    throw new LmrError({ code: "verify/bad-leak-min-lines", message: `minLines must be a whole number >= 1, got ${minLines}` });
  }
  const root = await stat(workspaceDir).catch(() => undefined);
  if (!root?.isDirectory()) {
    throw new LmrError({
      code: "verify/workspace-missing",
      message: `workspace ${workspaceDir} is not a directory`,
      file: workspaceDir,
      hint: "build the task bundle first",
    });
  }
  const fp = buildFingerprints(references.flatMap((r) => r.bodies.map((text, i) => ({ target: r.targets?.[i] ?? `${r.file}#${i + 1}`, text }))));
  const targetFiles = new Set(references.map((r) => r.file));
  const result: LeakScanResult = { leaks: [], scanned: 0, skipped: { binary: 0, tooLarge: [] } };
  const textFiles: string[] = [];

  const walk = async (rel: string): Promise<void> => {
    const entries = await readdir(join(workspaceDir, rel), { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const path = rel === "" ? e.name : `${rel}/${e.name}`;
      if (e.name === ".git" && (e.isDirectory() || e.isFile())) {
        result.leaks.push({
          file: path,
          kind: "git",
          detail: e.isDirectory()
            ? "git repository: its history can hold the reference"
            : "git link file: points at a repository whose history can hold the reference",
        });
      } else if (e.isDirectory()) {
        if (e.name === ".ipynb_checkpoints")
          result.leaks.push({ file: path, kind: "checkpoint", detail: "Jupyter checkpoint folder: saved copies of notebooks" });
        await walk(path);
      } else if (e.isFile()) {
        // the paper the bundle adds (paper.pdf, paper.md) is the paper's text, not code: it may quote the method
        if (rel === "" && WORKSPACE_PAPER_FILES.includes(e.name)) continue;
        if (BYTECODE_FILE.test(e.name)) {
          const source = sourceOfBytecode(path);
          const detail = targetFiles.has(source)
            ? `compiled Python of the target file ${source}: the reference can be decompiled`
            : `compiled Python of ${source}: its source can be recovered from it`;
          result.leaks.push({ file: path, kind: "bytecode", ...(targetFiles.has(source) ? { target: source } : {}), detail });
          continue;
        }
        if (CHECKPOINT_FILE.test(e.name)) result.leaks.push({ file: path, kind: "checkpoint", detail: "backup copy of a file (may predate masking)" });
        textFiles.push(path);
      }
    }
  };
  await walk("");

  for (const path of textFiles) result.leaks.push(...scanFile(workspaceDir, path, fp, minLines, result));
  markAllowed(result.leaks, opts.allowed ?? []);
  result.leaks.sort(
    (a, b) =>
      (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) ||
      (a.cell ?? -1) - (b.cell ?? -1) ||
      (a.line ?? 0) - (b.line ?? 0) ||
      (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0),
  );
  result.skipped.tooLarge.sort();
  return result;
}

function scanFile(root: string, path: string, fp: Fingerprints, minLines: number, result: LeakScanResult): Leak[] {
  const buf = readSmallFile(join(root, path));
  if (buf === undefined) {
    result.skipped.tooLarge.push(path);
    return [];
  }
  if (buf.subarray(0, SNIFF_BYTES).includes(0)) {
    result.skipped.binary++;
    return [];
  }
  result.scanned++;
  if (fp.bodies.length === 0) return [];
  const text = buf.toString("utf8");
  if (path.endsWith(".ipynb")) {
    const cells = notebookCode(text);
    if (cells) return findCopies(cells.text, fp, minLines).map((m) => notebookLeak(path, m, fp, cells.origins));
  }
  return findCopies(text, fp, minLines).map((m) => ({ file: path, line: m.line, kind: "copy", target: fp.bodies[m.body]!.target, detail: describe(m, fp) }));
}

/** `pkg/__pycache__/m.cpython-311.pyc` and `pkg/m.pyc` → `pkg/m.py`. */
function sourceOfBytecode(path: string): string {
  const parts = path.split("/");
  const name = parts.pop()!;
  if (parts[parts.length - 1] === "__pycache__") parts.pop();
  return [...parts, `${name.split(".")[0]}.py`].join("/");
}

/** The file's bytes, or undefined when it is over MAX_BYTES. Synchronous on purpose: thousands of
 * small files read faster without a thread-pool round trip (and four promises) each. */
function readSmallFile(abs: string): Buffer | undefined {
  const fd = openSync(abs, "r");
  try {
    const { size } = fstatSync(fd);
    if (size > MAX_BYTES) return undefined;
    const buf = Buffer.allocUnsafe(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, buf, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
    return buf.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

/**
 * The cells of a notebook joined into one text, with each line's cell and line in the cell.
 * Markdown and raw cells are included: a fenced code block there leaks as much as a code cell.
 */
function notebookCode(text: string): { text: string; origins: { cell: number; line: number }[] } | undefined {
  let nb: unknown;
  try {
    nb = JSON.parse(text);
  } catch {
    return undefined; // not JSON: scanned as plain text instead
  }
  if (typeof nb !== "object" || nb === null) return undefined;
  const cells = (nb as { cells?: unknown }).cells;
  if (!Array.isArray(cells)) return undefined;
  const parts: string[] = [];
  const origins: { cell: number; line: number }[] = [];
  cells.forEach((cell: { source?: unknown } | null, index) => {
    if (!cell) return;
    const src = Array.isArray(cell.source) ? cell.source.join("") : typeof cell.source === "string" ? cell.source : "";
    const lines = src.split("\n");
    lines.forEach((_, i) => origins.push({ cell: index, line: i + 1 }));
    parts.push(lines.join("\n"));
  });
  return { text: parts.join("\n"), origins };
}

function notebookLeak(path: string, m: TextMatch, fp: Fingerprints, origins: { cell: number; line: number }[]): Leak {
  const at = origins[m.line - 1] ?? { cell: 0, line: m.line };
  const end = origins[m.endLine - 1] ?? at;
  const where = end.cell === at.cell ? { ...m, line: at.line, endLine: end.line } : { ...m, line: at.line, endLine: m.endLine - m.line + at.line };
  const cells = end.cell === at.cell ? `cells[${at.cell}]` : `cells[${at.cell}..${end.cell}]`;
  return { file: path, cell: at.cell, line: at.line, kind: "notebook", target: fp.bodies[m.body]!.target, detail: `${cells}: ${describe(where, fp)}` };
}

function describe(m: TextMatch, fp: Fingerprints): string {
  const target = fp.bodies[m.body]!.target;
  if (m.how === "lines") {
    return `lines ${m.line}-${m.endLine} repeat ${m.matched} of the ${m.total} distinctive lines of the reference of ${target}`;
  }
  const share = Math.round((100 * m.matched) / m.total);
  return `from line ${m.line}, ${share}% of the token 8-grams of the reference of ${target} (a reformatted copy)`;
}

function markAllowed(leaks: Leak[], allowed: { file: string; task?: string }[]): void {
  const rules = allowed.map((a) => ({ prefix: a.file.replace(/\/+$/, ""), task: a.task }));
  for (const leak of leaks) {
    const hit = rules.some(
      (r) => (leak.file === r.prefix || leak.file.startsWith(`${r.prefix}/`)) && (r.task === undefined || (leak.target ?? "").startsWith(`${r.task}:`)),
    );
    if (hit) leak.allowed = true;
  }
}
