export { extractPaper, readPaperPages, checkPages, normalizePageText } from "./extract.js";
export { findInPaper, formatFinding, termPattern, EQUATION_WINDOW } from "./find.js";
export { isHeading } from "./headings.js";
export { joinHyphenation, toMarkdown } from "./markdown.js";
export type { Finding, PaperPages } from "./types.js";
