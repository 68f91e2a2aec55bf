import { open, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { LmrError } from "../core/errors.js";
import { writeFileAtomic } from "../core/fs-atomic.js";
import { sha256 } from "../core/hash.js";
import { downloadResumable, DownloadError } from "./download.js";
import { setPaperPin } from "./manifest-pin.js";
import { cachedPdfPath, copyIntoCache, fileSize, hashFileStream, moveIntoCache, papersCacheDir, readPinRecord, writePinRecord } from "./paper-cache.js";
import { paperSourceOf, papersDirNames, pinsPdf, type PaperSource } from "./pin.js";
import { checkAgainstPin, findInPapersDir, pinMismatch, type PaperOwner } from "./resolve.js";

const require = createRequire(import.meta.url);
const VERSION = (require("../../package.json") as { version: string }).version;
const PDF_MAGIC = "%PDF-";

export interface FetchOptions {
  cacheDir?: string;
  /** Resolve from this folder instead of downloading (offline). */
  papersDir?: string;
  /** Where arXiv PDFs are downloaded from (ends with '/'). */
  arxivBase: string;
  /** Write sha256/bytes into task.json where it has none. */
  updateManifest?: boolean;
  idleTimeoutMs?: number;
  attempts?: number;
}

type FetchStatus = "downloaded" | "cached" | "papers-dir" | "not-pinned";

export interface FetchResult {
  task: string;
  manifest: string;
  status: FetchStatus;
  url?: string;
  /** The cached PDF. */
  path?: string;
  sha256?: string;
  bytes?: number;
  /** The manifest pins sha256/bytes (before this run). */
  pinned: boolean;
  manifest_updated?: boolean;
  requests?: number;
  /** The first Range request continued a partial download at this offset. */
  resumed_from?: number;
}

/**
 * Makes sure the cache holds the task's pinned PDF: from the papers folder when
 * one is given (never downloading then), else from the cache, else downloaded.
 * The result is hash-checked before it is renamed into place.
 */
export async function fetchTaskPaper(owner: PaperOwner, opts: FetchOptions): Promise<FetchResult> {
  const base: FetchResult = { task: owner.id, manifest: owner.manifestPath, status: "not-pinned", pinned: owner.paper.sha256 !== undefined };
  if (!pinsPdf(owner.paper)) return base;
  const papers = papersCacheDir(opts.cacheDir);
  const source = paperSourceOf(owner.paper, opts.arxivBase);
  let got: Omit<FetchResult, "task" | "manifest" | "pinned"> & { sha256: string; bytes: number };

  if (opts.papersDir !== undefined) {
    const found = await findInPapersDir(owner, opts.papersDir);
    if (!found) {
      throw new LmrError({
        code: "paper/not-in-folder",
        file: owner.manifestPath,
        pointer: source?.pointer ?? "/paper/sha256",
        message: `task ${owner.id}: no PDF in ${opts.papersDir} (looked for ${papersDirNames(owner.paper, owner.id).join(", ")})`,
        hint: "put the PDF there under one of those names, or drop --papers / LMR_PAPERS to download it",
      });
    }
    const path = await copyIntoCache(papers, found.path, found.sha256);
    if (source) await writePinRecord(papers, { key: source.key, sha256: found.sha256, bytes: found.bytes, from: found.path });
    got = { status: "papers-dir", path, sha256: found.sha256, bytes: found.bytes };
  } else {
    const cached = await fromCache(owner, papers, source);
    if (cached) got = { status: "cached", ...cached, ...(source ? { url: source.url } : {}) };
    else if (!source) throw noSource(owner);
    else got = await download(owner, papers, source, opts);
  }

  const result: FetchResult = { ...base, ...got };
  if (opts.updateManifest && !base.pinned) {
    const text = await readFile(owner.manifestPath, "utf8");
    await writeFileAtomic(owner.manifestPath, setPaperPin(text, { sha256: got.sha256, bytes: got.bytes }));
    result.manifest_updated = true;
  }
  return result;
}

async function fromCache(
  owner: PaperOwner,
  papers: string,
  source: PaperSource | undefined,
): Promise<{ path: string; sha256: string; bytes: number } | undefined> {
  const { sha256: pinned } = owner.paper;
  if (pinned !== undefined) {
    const path = cachedPdfPath(papers, pinned);
    if ((await fileSize(path)) === undefined) return undefined;
    return { path, ...(await checkAgainstPin(owner, path, "the paper cache")) };
  }
  const rec = source ? await readPinRecord(papers, source.key) : undefined;
  return rec ? { path: cachedPdfPath(papers, rec.sha256), sha256: rec.sha256, bytes: rec.bytes } : undefined;
}

async function download(
  owner: PaperOwner,
  papers: string,
  source: PaperSource,
  opts: FetchOptions,
): Promise<Omit<FetchResult, "task" | "manifest" | "pinned"> & { sha256: string; bytes: number }> {
  const { sha256: pinned, bytes } = owner.paper;
  // one part file per pin, so a rerun continues it; the hash names the final file
  const part = join(papers, `${pinned ?? `pin-${sha256(source.key).slice(0, 16)}`}.pdf.part`);
  let r;
  try {
    r = await downloadResumable(source.url, part, {
      ...(bytes !== undefined ? { bytes } : {}),
      ...(opts.attempts !== undefined ? { attempts: opts.attempts } : {}),
      ...(opts.idleTimeoutMs !== undefined ? { idleTimeoutMs: opts.idleTimeoutMs } : {}),
      userAgent: `lmr/${VERSION} (paper-code-reproduction benchmark)`,
    });
  } catch (err) {
    if (!(err instanceof DownloadError)) throw err;
    const missing = err.reason === "http" && (err.status === 404 || err.status === 410);
    throw new LmrError({
      code: err.reason === "http" ? "paper/http-error" : "paper/unreachable",
      file: owner.manifestPath,
      pointer: source.pointer,
      message: `task ${owner.id}: cannot download ${source.url}: ${err.message}`,
      hint: missing
        ? `check ${source.pointer.slice(1).replace("/", ".")} (an arXiv id needs its version, e.g. 2305.18290v3)`
        : (await fileSize(part)) !== undefined
          ? "run `lmr paper fetch` again to continue the partial download, or use --papers DIR with the PDF"
          : "check the network (or --arxiv-base / LMR_ARXIV_BASE), or use --papers DIR with the PDF",
      cause: err,
    });
  }
  const got = await hashFileStream(part);
  if ((pinned !== undefined && got.sha256 !== pinned) || (bytes !== undefined && got.bytes !== bytes)) {
    await rm(part, { force: true });
    const e = pinMismatch(owner, source.url, "as downloaded", got);
    throw new LmrError({
      code: e.code,
      file: owner.manifestPath,
      pointer: e.pointer!,
      message: e.message,
      hint:
        source.pointer === "/paper/url"
          ? `paper.url names no version and arXiv now serves another one: set "arxiv" to the version whose PDF was pinned (e.g. "${source.url.slice(source.url.lastIndexOf("/") + 1)}v1")`
          : "the file at that address is not the one pinned: check paper.arxiv / paper.pdf_url, or correct paper.sha256 and paper.bytes if the pin is wrong",
    });
  }
  const head = await readHead(part);
  if (!head.includes(PDF_MAGIC)) {
    await rm(part, { force: true });
    throw new LmrError({
      code: "paper/not-pdf",
      file: owner.manifestPath,
      pointer: source.pointer,
      message: `task ${owner.id}: ${source.url} did not send a PDF (it starts ${JSON.stringify(head.slice(0, 40))})`,
      hint: "the address may be an HTML page: give the PDF's own address",
    });
  }
  const path = await moveIntoCache(papers, part, got.sha256);
  await writePinRecord(papers, { key: source.key, sha256: got.sha256, bytes: got.bytes, from: source.url });
  return { status: "downloaded", url: source.url, path, ...got, requests: r.requests, ...(r.resumedFrom !== undefined ? { resumed_from: r.resumedFrom } : {}) };
}

async function readHead(path: string): Promise<string> {
  const file = await open(path, "r");
  try {
    const buf = Buffer.alloc(1024);
    const { bytesRead } = await file.read(buf, 0, buf.length, 0);
    return buf.subarray(0, bytesRead).toString("latin1");
  } finally {
    await file.close();
  }
}

function noSource(owner: PaperOwner): LmrError {
  return new LmrError({
    code: "paper/no-source",
    file: owner.manifestPath,
    pointer: "/paper/sha256",
    message: `task ${owner.id}: the PDF with sha256 ${owner.paper.sha256} is not cached, and the manifest says nowhere to download it from`,
    hint: 'add "arxiv" or "pdf_url" to the paper section, or give --papers DIR with the PDF',
  });
}
