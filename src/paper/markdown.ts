import type { PaperPages } from "./types.js";

const BROKEN_END = /[A-Za-z][a-z]-$/;
const LOWER_START = /^\s*[a-z]/;

/**
 * Joins words that a line break hyphenated: "pref-" + "erence optimisation"
 * becomes "preference" + "optimisation". Only where a lowercase word goes on
 * at the start of the next line, so "Self-" + "Attention" and "x -" stay.
 */
export function joinHyphenation(text: string): string {
  const lines = text.split("\n");
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!;
    while (i + 1 < lines.length && BROKEN_END.test(line) && LOWER_START.test(lines[i + 1]!)) {
      const next = lines[i + 1]!.trimStart();
      const word = /^\S+/.exec(next)![0];
      line = line.slice(0, -1) + word;
      const rest = next.slice(word.length).trimStart();
      if (rest !== "") {
        lines[i + 1] = rest;
        break;
      }
      i++; // the next line was only the word's end; the joined word may break again
    }
    out.push(line);
  }
  return out.join("\n");
}

/** A line that Markdown would read as a heading, list, quote or rule gets a backslash so it stays text. */
function escapeLine(line: string): string {
  return /^\s*([#>]|[-*+=_]{3,}\s*$|[-*+]\s)/.test(line) ? line.replace(/^(\s*)/, "$1\\") : line;
}

/** paper.md: a `## Page N` section per page, hyphenation at line ends joined. */
export function toMarkdown(pages: PaperPages["pages"], title?: string): string {
  const parts: string[] = [];
  if (title !== undefined && title !== "") parts.push(`# ${title}\n`);
  const keys = Object.keys(pages).sort((a, b) => Number(a) - Number(b));
  for (const key of keys) {
    const body = joinHyphenation(pages[key] ?? "")
      .split("\n")
      .map(escapeLine)
      .join("\n")
      .trim();
    parts.push(`## Page ${key}\n\n${body === "" ? "_(no text on this page)_" : body}\n`);
  }
  return parts.join("\n");
}
