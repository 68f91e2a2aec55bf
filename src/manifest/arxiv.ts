/**
 * arXiv identifiers and links, as the manifest's paper section uses them:
 * `paper.arxiv` is an id with its version ("2305.18290v3", "hep-th/9901001v2"),
 * `paper.url` is often an abstract link ("https://arxiv.org/abs/2305.18290").
 */

export interface ArxivRef {
  /** The id without version: "2305.18290" or "hep-th/9901001". */
  id: string;
  /** The version number, when the text gave one. */
  version?: number;
}

const MODERN = /^(\d{4}\.\d{4,5})(?:v(\d+))?$/;
const LEGACY = /^([a-z-]+(?:\.[A-Z]{2})?\/\d{7})(?:v(\d+))?$/;
const ARXIV_HOSTS = new Set(["arxiv.org", "www.arxiv.org", "export.arxiv.org"]);

/** "2305.18290v3" → {id: "2305.18290", version: 3}; undefined when it is not an arXiv id. */
export function parseArxivId(raw: string): ArxivRef | undefined {
  const text = raw.trim().replace(/^arxiv:/i, "");
  const m = MODERN.exec(text) ?? LEGACY.exec(text);
  if (!m) return undefined;
  return m[2] !== undefined ? { id: m[1]!, version: Number(m[2]) } : { id: m[1]! };
}

export type ArxivPage = "abs" | "pdf" | "html";

/** The id (and version) in an arxiv.org /abs/, /pdf/ or /html/ link, and which page it is. */
export function parseArxivUrl(url: string): (ArxivRef & { page: ArxivPage }) | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (!/^https?:$/.test(u.protocol) || !ARXIV_HOSTS.has(u.hostname.toLowerCase())) return undefined;
  const m = /^\/(abs|pdf|html)\/(.+?)(?:\.pdf)?\/?$/.exec(u.pathname);
  if (!m) return undefined;
  const ref = parseArxivId(decodeURIComponent(m[2]!));
  return ref ? { ...ref, page: m[1] as ArxivPage } : undefined;
}

/** "2305.18290" + 3 → "2305.18290v3". */
export function formatArxivRef(ref: ArxivRef): string {
  return ref.version !== undefined ? `${ref.id}v${ref.version}` : ref.id;
}

/**
 * A file name for a versioned arXiv id: legacy ids hold a '/', which becomes
 * '_' ("hep-th/9901001v2" → "hep-th_9901001v2.pdf").
 */
export function arxivFileName(versioned: string): string {
  return `${versioned.replace(/\//g, "_")}.pdf`;
}
