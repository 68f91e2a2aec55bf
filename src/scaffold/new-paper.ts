import { readFile } from "node:fs/promises";
import { isLmrError } from "../core/errors.js";
import { formatArxivRef, parseArxivUrl } from "../manifest/arxiv.js";
import type { Paper } from "../manifest/types.js";
import { fetchTaskPaper } from "../paper/fetch.js";
import { copyIntoCache, hashFileStream, papersCacheDir, writePinRecord } from "../paper/paper-cache.js";
import { arxivBaseFrom, paperSourceOf } from "../paper/pin.js";

/** The paper pin `lmr new` writes: where the PDF is, and its hash when the PDF was at hand. */
export type PaperPin = Pick<Paper, "arxiv" | "pdf_url" | "sha256" | "bytes">;

/** A link straight to a PDF (an ACL Anthology .pdf, OpenReview's /pdf?id=): a stable download address. */
function isPdfLink(url: string): boolean {
  try {
    const u = new URL(url);
    return /\.pdf$/i.test(u.pathname) || (u.hostname.endsWith("openreview.net") && u.pathname === "/pdf");
  } catch {
    return false;
  }
}

/**
 * Pins the paper of a new task from its URL: an arXiv link with a version gives
 * paper.arxiv, a direct PDF link gives paper.pdf_url. The hash comes from
 * --paper-pdf when that is a PDF (the file then goes into the cache, so the
 * first build has it), else from downloading the pinned PDF; when neither
 * works the pin stays without a hash and a note says how to add it.
 */
export async function pinNewPaper(
  url: string,
  pdfFile: string | undefined,
  owner: { id: string; manifestPath: string; title: string; year: number },
  note: (line: string) => void,
  opts: { cacheDir?: string } = {},
): Promise<PaperPin> {
  const pin: PaperPin = {};
  const arxiv = parseArxivUrl(url);
  if (arxiv?.version !== undefined) pin.arxiv = formatArxivRef(arxiv);
  else if (arxiv) note(`paper: ${url} names no version, so paper.arxiv is not set; add it ("arxiv": "${arxiv.id}vN") to pin the PDF`);
  else if (isPdfLink(url)) pin.pdf_url = url;
  const paper: Paper = { title: owner.title, url, year: owner.year, ...pin };
  const source = paperSourceOf(paper, arxivBaseFrom());
  if (!source) return pin;

  if (pdfFile !== undefined && (await readFile(pdfFile)).subarray(0, 1024).toString("latin1").includes("%PDF-")) {
    const got = await hashFileStream(pdfFile);
    const papers = papersCacheDir(opts.cacheDir);
    await copyIntoCache(papers, pdfFile, got.sha256);
    await writePinRecord(papers, { key: source.key, sha256: got.sha256, bytes: got.bytes, from: pdfFile });
    note(`paper: pinned sha256 of ${pdfFile} as the PDF of ${source.url} (check that it is that version)`);
    return { ...pin, sha256: got.sha256, bytes: got.bytes };
  }
  try {
    const r = await fetchTaskPaper({ id: owner.id, manifestPath: owner.manifestPath, paper }, { arxivBase: arxivBaseFrom(), attempts: 1, idleTimeoutMs: 20_000, ...(opts.cacheDir ? { cacheDir: opts.cacheDir } : {}) });
    if (r.sha256 !== undefined && r.bytes !== undefined) return { ...pin, sha256: r.sha256, bytes: r.bytes };
  } catch (err) {
    if (!isLmrError(err)) throw err;
    note(`paper: ${err.message}; sha256/bytes not pinned (later: lmr paper fetch --update-manifest TASK_DIR)`);
  }
  return pin;
}
