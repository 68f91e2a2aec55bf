import { readFile, stat } from "node:fs/promises";
import { join, posix } from "node:path";
import { isLmrError } from "../core/errors.js";
import { formatArxivRef, parseArxivUrl } from "../manifest/arxiv.js";
import type { Paper } from "../manifest/types.js";
import { fetchTaskPaper } from "../paper/fetch.js";
import { copyIntoCache, hashFileStream, papersCacheDir, writePinRecord } from "../paper/paper-cache.js";
import { arxivBaseFrom, paperSourceOf } from "../paper/pin.js";
import { parseRepoUrl } from "../source/repo-url.js";
import { usageError } from "./choices.js";

/** The paper pin `lmr new` writes: where the PDF is, and its hash when the PDF was at hand. */
type PaperPin = Pick<Paper, "arxiv" | "pdf_url" | "sha256" | "bytes">;

/** The pin, and the PDF it was hashed from when that was a local file (its pages can be cited). */
export interface NewPaperPin {
  pin: PaperPin;
  /** A local copy of the pinned PDF (the --paper-pdf file, or the file in the upstream tree). */
  pdfPath?: string;
}

/** The upstream `lmr new` checked out: a PDF inside it at the pinned commit needs no download. */
export interface UpstreamAtCommit {
  /** The repository URL (undefined for a local folder). */
  repo?: string;
  /** Full SHA of the checked-out commit. */
  commit?: string;
  /** The checked-out files. */
  treeDir: string;
}

const PDF_MAGIC = "%PDF-";

/** A link straight to a PDF (an ACL Anthology .pdf, OpenReview's /pdf?id=): a stable download address. */
function isPdfLink(url: string): boolean {
  try {
    const u = new URL(url);
    return /\.pdf$/i.test(u.pathname) || (u.hostname.endsWith("openreview.net") && u.pathname === "/pdf");
  } catch {
    return false;
  }
}

async function isPdfFile(path: string): Promise<boolean> {
  const ok = await stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
  return ok && (await readFile(path)).subarray(0, 1024).toString("latin1").includes(PDF_MAGIC);
}

/** A file of a GitHub repository at a revision, as a download link names it. */
interface RepoFileLink {
  owner: string;
  name: string;
  rev: string;
  path: string;
  /** The link is the HTML page of the file (github.com/…/blob/… without ?raw=true). */
  htmlPage: boolean;
}

/**
 * github.com/O/N/raw/REV/PATH, github.com/O/N/blob/REV/PATH(?raw=true) and
 * raw.githubusercontent.com/O/N/REV/PATH; undefined for any other link.
 */
function parseRepoFileLink(link: string): RepoFileLink | undefined {
  let u: URL;
  try {
    u = new URL(link);
  } catch {
    return undefined;
  }
  if (!/^https?:$/.test(u.protocol)) return undefined;
  const segs = u.pathname
    .split("/")
    .filter((s) => s !== "")
    .map((s) => decodeURIComponent(s));
  const host = u.hostname.toLowerCase();
  if (host === "raw.githubusercontent.com" && segs.length >= 4) {
    return { owner: segs[0]!, name: segs[1]!, rev: segs[2]!, path: segs.slice(3).join("/"), htmlPage: false };
  }
  if ((host === "github.com" || host === "www.github.com") && segs.length >= 5 && (segs[2] === "raw" || segs[2] === "blob")) {
    const htmlPage = segs[2] === "blob" && u.searchParams.get("raw") !== "true";
    return { owner: segs[0]!, name: segs[1]!.replace(/\.git$/, ""), rev: segs[3]!, path: segs.slice(4).join("/"), htmlPage };
  }
  return undefined;
}

/**
 * The file a --pdf-url names inside the checked-out upstream, when the link is
 * a file of that repository; undefined for a link elsewhere. A link into the
 * upstream must name the pinned commit (a branch's file changes under the
 * address) and the raw file (a blob page is HTML).
 */
async function pdfInUpstream(pdfUrl: string, upstream: UpstreamAtCommit | undefined): Promise<string | undefined> {
  const link = parseRepoFileLink(pdfUrl);
  const repo = upstream?.repo !== undefined ? parseRepoUrl(upstream.repo) : undefined;
  if (!link || !repo?.github || !upstream) return undefined;
  if (link.owner.toLowerCase() !== repo.owner.toLowerCase() || link.name.toLowerCase() !== repo.name.toLowerCase()) return undefined;
  const commit = upstream.commit ?? "";
  const stable = `https://github.com/${repo.owner}/${repo.name}/raw/${commit}/${link.path}`;
  if (link.htmlPage) throw usageError("--pdf-url", `${pdfUrl} is the HTML page of the file, not the PDF`, `give the raw file: --pdf-url ${stable}`);
  if (link.rev.length < 7 || !commit.toLowerCase().startsWith(link.rev.toLowerCase())) {
    throw usageError(
      "--pdf-url",
      `${pdfUrl} names revision '${link.rev}', not the pinned commit ${commit}: what that address serves can change`,
      `name the pinned commit: --pdf-url ${stable}`,
    );
  }
  const path = posix.normalize(link.path);
  if (path.startsWith("../") || posix.isAbsolute(path)) throw usageError("--pdf-url", `${pdfUrl} names a path outside the repository`);
  const abs = join(upstream.treeDir, path);
  if (
    !(await stat(abs).then(
      (s) => s.isFile(),
      () => false,
    ))
  ) {
    throw usageError(
      "--pdf-url",
      `${path} is not a file of ${upstream.repo} at ${commit}`,
      "check the path; a mirror snapshot may leave large files out: then give the PDF itself with --paper-pdf",
    );
  }
  if (!(await isPdfFile(abs)))
    throw usageError("--pdf-url", `${path} in ${upstream.repo} at ${commit} is not a PDF (no %PDF- header)`, "give the link of the paper's PDF");
  return abs;
}

/**
 * Pins the paper of a new task. Where the PDF is downloaded from: an arXiv
 * --paper-url with a version gives paper.arxiv, a direct PDF link (or
 * --pdf-url) gives paper.pdf_url. Its hash comes from a local copy whatever
 * the URL looks like: --paper-pdf when that is a PDF, or the file --pdf-url
 * names inside the upstream at the pinned commit; the copy then goes into the
 * paper cache, so the first build has it. Without a local copy the pinned PDF
 * is downloaded; when that fails the pin stays without a hash and a note says
 * how to add it.
 */
export async function pinNewPaper(
  paperIn: { url: string; pdfFile?: string; pdfUrl?: string },
  owner: { id: string; manifestPath: string; title: string; year: number },
  note: (line: string) => void,
  opts: { cacheDir?: string; upstream?: UpstreamAtCommit } = {},
): Promise<NewPaperPin> {
  const { url, pdfFile, pdfUrl } = paperIn;
  const pin: PaperPin = {};
  const arxiv = parseArxivUrl(url);
  if (arxiv?.version !== undefined) pin.arxiv = formatArxivRef(arxiv);
  if (pdfUrl !== undefined) {
    const a = parseArxivUrl(pdfUrl);
    if (a && a.version === undefined)
      throw usageError(
        "--pdf-url",
        `${pdfUrl} is an arXiv link without a version: its bytes change with each new version`,
        `give the version: --pdf-url https://arxiv.org/pdf/${a.id}vN`,
      );
    if (a) pin.arxiv = formatArxivRef(a);
    else pin.pdf_url = pdfUrl;
  } else if (!arxiv && isPdfLink(url)) pin.pdf_url = url;

  const local = pdfFile !== undefined && (await isPdfFile(pdfFile)) ? pdfFile : pdfUrl !== undefined ? await pdfInUpstream(pdfUrl, opts.upstream) : undefined;
  if (local !== undefined) {
    const got = await hashFileStream(local);
    const papers = papersCacheDir(opts.cacheDir);
    await copyIntoCache(papers, local, got.sha256);
    const source = paperSourceOf({ title: owner.title, url, year: owner.year, ...pin, ...got });
    if (source && source.pointer !== "/paper/url") await writePinRecord(papers, { key: source.key, sha256: got.sha256, bytes: got.bytes, from: local });
    note(
      `paper: pinned sha256 ${got.sha256.slice(0, 12)}… (${got.bytes} bytes) of ${local}${source ? ` as the PDF of ${source.url}` : ""}; the PDF is in the paper cache, and no paper text goes into the task`,
    );
    if (arxiv && arxiv.version === undefined && pin.arxiv === undefined) {
      note(
        `paper: ${url} names no version: a download takes arXiv's latest version and is checked against this hash; add "arxiv": "${arxiv.id}vN" (the version of this PDF) to pin it`,
      );
    } else if (!source) {
      note(
        `paper: ${url} is not a download address: give --pdf-url (or add paper.pdf_url) so that a machine without this PDF can fetch it; until then \`lmr paper fetch --papers DIR\` finds it as DIR/${got.sha256}.pdf`,
      );
    }
    return { pin: { ...pin, sha256: got.sha256, bytes: got.bytes }, pdfPath: local };
  }
  if (arxiv && arxiv.version === undefined && pin.arxiv === undefined) {
    note(
      `paper: ${url} names no version, so paper.arxiv is not set; add it ("arxiv": "${arxiv.id}vN") to pin the PDF, or give the PDF with --paper-pdf (its hash is pinned)`,
    );
  }
  const paper: Paper = { title: owner.title, url, year: owner.year, ...pin };
  if (!paperSourceOf(paper, arxivBaseFrom())) return { pin };
  try {
    const r = await fetchTaskPaper(
      { id: owner.id, manifestPath: owner.manifestPath, paper },
      { arxivBase: arxivBaseFrom(), attempts: 1, idleTimeoutMs: 20_000, ...(opts.cacheDir ? { cacheDir: opts.cacheDir } : {}) },
    );
    if (r.sha256 !== undefined && r.bytes !== undefined)
      return { pin: { ...pin, sha256: r.sha256, bytes: r.bytes }, ...(r.path !== undefined ? { pdfPath: r.path } : {}) };
  } catch (err) {
    if (!isLmrError(err)) throw err;
    note(`paper: ${err.message}; sha256/bytes not pinned (later: lmr paper fetch --update-manifest TASK_DIR)`);
  }
  return { pin };
}
