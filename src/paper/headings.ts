/** Section names papers use without a number, matched as a whole line. */
const NAMED_SECTIONS = [
  "abstract",
  "introduction",
  "background",
  "related work",
  "related works",
  "preliminaries",
  "method",
  "methods",
  "methodology",
  "approach",
  "experiments",
  "experimental setup",
  "experimental results",
  "results",
  "evaluation",
  "analysis",
  "discussion",
  "conclusion",
  "conclusions",
  "limitations",
  "ethics statement",
  "broader impact",
  "acknowledgements",
  "acknowledgments",
  "acknowledgement",
  "acknowledgment",
  "references",
  "bibliography",
  "appendix",
  "appendices",
  "supplementary material",
];
const NAMED = new Set(NAMED_SECTIONS);

/** "3 Method", "3.2 Decoding", "4. Results", "A.1 Proofs", "Appendix B", "II. RELATED WORK". */
const NUMBERED = /^(?:\d{1,2}(?:\.\d{1,2}){0,3}\.?|[A-H](?:\.\d{1,2}){1,3}\.?|[IVX]{1,5}\.|Appendix [A-H](?:\.\d{1,2})*[.:]?)\s+(\S.*)$/;
const MAX_WORDS = 10;

/**
 * True when a line of paper text looks like a section heading: a numbered
 * title ("3 Method", "3.2 Decoding"), a known section name ("Abstract",
 * "References") or a short ALL-CAPS line ("RELATED WORK"). Sentences, equations
 * and table rows are rejected: a title starts with a capital, has at most ten
 * words, no sentence end and few symbols.
 */
export function isHeading(raw: string): boolean {
  const line = raw.trim().replace(/\s+/g, " ");
  if (line.length < 3 || line.length > 90) return false;
  if (NAMED.has(line.toLowerCase().replace(/[.:]$/, ""))) return true;
  const numbered = NUMBERED.exec(line);
  if (numbered) return isTitle(numbered[1]!);
  if (/^Appendix [A-H]$/.test(line)) return true;
  return isAllCapsTitle(line);
}

function isTitle(title: string): boolean {
  const words = title.split(" ");
  if (words.length > MAX_WORDS) return false;
  if (!/^[A-Z]/.test(title)) return false;
  if (/[.;,:]$/.test(title) && !/:$/.test(title)) return false;
  // equations, table rows and numbers-only lines carry symbols or digits heavily
  if (/[=<>+*/\\|^_{}[\]]/.test(title)) return false;
  const letters = (title.match(/[A-Za-z]/g) ?? []).length;
  return letters >= 3 && letters / title.replace(/ /g, "").length >= 0.7;
}

function isAllCapsTitle(line: string): boolean {
  if (!/^[A-Z0-9][A-Z0-9 .,:&'’()-]*$/.test(line)) return false;
  if (line.split(" ").length > MAX_WORDS) return false;
  const letters = (line.match(/[A-Z]/g) ?? []).length;
  // "KL" or "(3)" are not headings; a title has a few letters and is mostly letters
  return letters >= 4 && letters / line.replace(/ /g, "").length >= 0.7 && !/\.$/.test(line.replace(/^[IVX]+\./, ""));
}
