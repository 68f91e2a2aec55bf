import { arxivFileName, parseArxivUrl } from "../manifest/arxiv.js";
import type { Paper } from "../manifest/types.js";

/** Where `lmr paper fetch` downloads arXiv PDFs from unless --arxiv-base / LMR_ARXIV_BASE says otherwise. */
export const DEFAULT_ARXIV_BASE = "https://arxiv.org/pdf/";

/** The download address of a task's PDF and the manifest field it comes from. */
export interface PaperSource {
  url: string;
  pointer: "/paper/pdf_url" | "/paper/arxiv" | "/paper/url";
  /**
   * What names the PDF independently of any mirror: "arxiv:<id>" or the pdf_url.
   * Unhashed papers are found in the cache by this key, so a PDF fetched from a
   * mirror (LMR_ARXIV_BASE) is found again without it.
   */
  key: string;
}

/** The arXiv base from a flag, else $LMR_ARXIV_BASE, else arxiv.org; always ending in '/'. */
export function arxivBaseFrom(flag?: string): string {
  const env = process.env.LMR_ARXIV_BASE;
  const base = flag ?? (env !== undefined && env !== "" ? env : DEFAULT_ARXIV_BASE);
  return base.endsWith("/") ? base : `${base}/`;
}

/**
 * Where the pinned PDF is downloaded from: pdf_url overrides the arXiv address.
 * A hash pinned beside an arXiv paper.url without a version (the PDF was given
 * as a file) is downloaded from the unversioned address, whose bytes change
 * with each new version: the hash check tells a different version apart.
 */
export function paperSourceOf(paper: Paper, arxivBase = DEFAULT_ARXIV_BASE): PaperSource | undefined {
  if (paper.pdf_url !== undefined) return { url: paper.pdf_url, pointer: "/paper/pdf_url", key: paper.pdf_url };
  if (paper.arxiv !== undefined) return { url: `${arxivBase}${paper.arxiv}`, pointer: "/paper/arxiv", key: `arxiv:${paper.arxiv}` };
  const fromUrl = paper.sha256 !== undefined ? parseArxivUrl(paper.url) : undefined;
  if (fromUrl) return { url: `${arxivBase}${fromUrl.id}`, pointer: "/paper/url", key: `arxiv:${fromUrl.id}` };
  return undefined;
}

/** True when the manifest pins a PDF (a place to get it, or its hash). */
export function pinsPdf(paper: Paper): boolean {
  return paper.arxiv !== undefined || paper.pdf_url !== undefined || paper.sha256 !== undefined;
}

/**
 * File names a papers folder (--papers DIR, LMR_PAPERS) may hold a task's PDF
 * under, in the order they are tried: `<sha256>.pdf`, `<arXiv id with
 * version>.pdf` (a legacy id's '/' as '_'), `<task id>.pdf`.
 */
export function papersDirNames(paper: Paper, taskId: string): string[] {
  const names: string[] = [];
  if (paper.sha256 !== undefined) names.push(`${paper.sha256}.pdf`);
  if (paper.arxiv !== undefined) names.push(arxivFileName(paper.arxiv));
  names.push(`${taskId}.pdf`);
  return [...new Set(names)];
}

/** "1.2 MB", "830 kB", "512 bytes": sizes for messages. */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} bytes`;
  if (n < 1_000_000) return `${(n / 1000).toFixed(0)} kB`;
  return `${(n / 1_000_000).toFixed(1)} MB`;
}
