import { join, resolve } from "node:path";
import { LmrError } from "../core/errors.js";
import type { Paper } from "../manifest/types.js";
import { cachedPdfPath, fileSize, hashFileStream, papersCacheDir, readPinRecord } from "./paper-cache.js";
import { paperSourceOf, papersDirNames, pinsPdf } from "./pin.js";

/** Where a task's PDF was found, and what it is. */
export interface ResolvedPdf {
  path: string;
  source: "cache" | "papers-dir";
  sha256: string;
  bytes: number;
  /** True when the manifest pins sha256/bytes (and the file matched them). */
  pinned: boolean;
}

export interface ResolveOptions {
  /** A folder of PDFs (--papers DIR); default $LMR_PAPERS. */
  papersDir?: string;
  /** The lmr cache (default $LMR_CACHE or ~/.cache/lmr). */
  cacheDir?: string;
}

/** The task a paper belongs to, for messages. */
export interface PaperOwner {
  id: string;
  manifestPath: string;
  paper: Paper;
}

/** --papers DIR, else $LMR_PAPERS, else none. */
export function papersDirFrom(flag?: string): string | undefined {
  const env = process.env.LMR_PAPERS;
  const dir = flag ?? (env !== undefined && env !== "" ? env : undefined);
  return dir !== undefined ? resolve(dir) : undefined;
}

/**
 * The task's PDF from the papers folder (tried first) or the cache, checked
 * against the manifest's sha256/bytes; undefined when neither has it. Never
 * downloads. A file that is there but wrong is an error naming it and the field.
 */
export async function resolvePaperPdf(owner: PaperOwner, opts: ResolveOptions = {}): Promise<ResolvedPdf | undefined> {
  const { paper } = owner;
  if (!pinsPdf(paper)) return undefined;
  const papersDir = opts.papersDir ?? papersDirFrom();
  if (papersDir !== undefined) {
    const found = await findInPapersDir(owner, papersDir);
    if (found) return found;
  }
  return findInCache(owner, papersCacheDir(opts.cacheDir));
}

/** The first of the task's names (see papersDirNames) present in `dir`, checked. */
export async function findInPapersDir(owner: PaperOwner, dir: string): Promise<ResolvedPdf | undefined> {
  for (const name of papersDirNames(owner.paper, owner.id)) {
    const path = join(dir, name);
    if ((await fileSize(path)) === undefined) continue;
    const { sha256, bytes } = await checkAgainstPin(owner, path, "the papers folder");
    return { path, source: "papers-dir", sha256, bytes, pinned: owner.paper.sha256 !== undefined };
  }
  return undefined;
}

async function findInCache(owner: PaperOwner, dir: string): Promise<ResolvedPdf | undefined> {
  const { paper } = owner;
  if (paper.sha256 !== undefined) {
    const path = cachedPdfPath(dir, paper.sha256);
    if ((await fileSize(path)) === undefined) return undefined;
    const { sha256, bytes } = await checkAgainstPin(owner, path, "the paper cache");
    return { path, source: "cache", sha256, bytes, pinned: true };
  }
  const source = paperSourceOf(paper);
  const rec = source ? await readPinRecord(dir, source.key) : undefined;
  if (!rec) return undefined;
  return { path: cachedPdfPath(dir, rec.sha256), source: "cache", sha256: rec.sha256, bytes: rec.bytes, pinned: false };
}

/** Hashes the file; when the manifest pins sha256/bytes they must match. */
export async function checkAgainstPin(owner: PaperOwner, path: string, where: string): Promise<{ sha256: string; bytes: number }> {
  const got = await hashFileStream(path);
  const { sha256, bytes } = owner.paper;
  if (sha256 !== undefined && got.sha256 !== sha256) throw pinMismatch(owner, path, where, got);
  if (bytes !== undefined && got.bytes !== bytes) throw pinMismatch(owner, path, where, got);
  return got;
}

export function pinMismatch(owner: PaperOwner, path: string, where: string, got: { sha256: string; bytes: number }): LmrError {
  const { sha256, bytes } = owner.paper;
  const cached = where === "the paper cache";
  return new LmrError({
    code: "paper/hash-mismatch",
    file: owner.manifestPath,
    pointer: "/paper/sha256",
    message: `task ${owner.id}: ${path} (${where}) has sha256 ${got.sha256} (${got.bytes} bytes), but the manifest pins sha256 ${sha256 ?? "-"} (${bytes ?? "-"} bytes)`,
    hint: cached
      ? `the cached file is damaged: delete ${path} and run \`lmr paper fetch\` again`
      : "put the PDF the manifest pins there, or, if the pin is wrong, correct paper.sha256 and paper.bytes",
  });
}
