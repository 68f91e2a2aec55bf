import { formatArxivRef, parseArxivId, parseArxivUrl } from "./arxiv.js";
import type { Finding } from "./schema-errors.js";

/*
 * Checks of the paper pin (paper.arxiv, paper.pdf_url, paper.sha256/bytes) that
 * the schema cannot express. Called from checkSemantics; like the other
 * semantic checks it tolerates missing or mistyped fields (the schema reports those).
 */

type Obj = Record<string, unknown>;

function asObject(v: unknown): Obj | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Obj) : undefined;
}
function asString(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/** Findings about the paper pin of one manifest. */
export function checkPaperPin(manifest: unknown): Finding[] {
  const paper = asObject(asObject(manifest)?.paper);
  if (!paper) return [];
  const findings: Finding[] = [];
  const arxivRaw = asString(paper.arxiv);
  const arxiv = arxivRaw !== undefined ? parseArxivId(arxivRaw) : undefined;
  const url = asString(paper.url);
  const pdfUrl = asString(paper.pdf_url);

  const fromUrl = url !== undefined ? parseArxivUrl(url) : undefined;
  if (arxiv && fromUrl) {
    if (fromUrl.id !== arxiv.id) {
      findings.push({
        pointer: "/paper/arxiv",
        message: `paper.arxiv '${arxivRaw}' is not the paper that paper.url links to (arXiv ${fromUrl.id})`,
        hint: `make them name the same paper, e.g. "arxiv": "${fromUrl.id}v${fromUrl.version ?? "N"}"`,
      });
    } else if (fromUrl.version !== undefined && arxiv.version !== undefined && fromUrl.version !== arxiv.version) {
      findings.push({
        pointer: "/paper/arxiv",
        message: `paper.url links to version ${fromUrl.version} (${formatArxivRef(fromUrl)}) but paper.arxiv pins version ${arxiv.version}`,
        hint: `drop the version from paper.url (https://arxiv.org/abs/${arxiv.id}), or make both name the same version`,
      });
    }
  }

  const pdfFromArxiv = pdfUrl !== undefined ? parseArxivUrl(pdfUrl) : undefined;
  if (pdfFromArxiv && pdfFromArxiv.page !== "pdf") {
    findings.push({
      pointer: "/paper/pdf_url",
      message: `paper.pdf_url is an arXiv ${pdfFromArxiv.page === "abs" ? "abstract" : "HTML"} page, not a PDF: ${pdfUrl}`,
      hint: `set "arxiv": "${pdfFromArxiv.id}v${pdfFromArxiv.version ?? "N"}" instead (the version pins the PDF) and remove pdf_url`,
    });
  } else if (pdfFromArxiv && arxiv && pdfFromArxiv.id !== arxiv.id) {
    findings.push({
      pointer: "/paper/pdf_url",
      message: `paper.pdf_url downloads arXiv ${formatArxivRef(pdfFromArxiv)}, but paper.arxiv pins ${arxivRaw}`,
      hint: "remove pdf_url (the arXiv id says where the PDF is), or make them name the same paper",
    });
  } else if (pdfFromArxiv && !arxiv && pdfFromArxiv.version === undefined) {
    findings.push({
      pointer: "/paper/pdf_url",
      message: `paper.pdf_url is an arXiv PDF without a version (${pdfUrl}): its bytes change when the authors post a new version`,
      hint: `use "arxiv": "${pdfFromArxiv.id}vN" with the version you mean instead of pdf_url`,
    });
  }

  // A hash without a download address is still a pin (the offline flow: the PDF comes from
  // --papers DIR / LMR_PAPERS / the cache, by its hash): only leaving the hash out is worse.
  return findings;
}
