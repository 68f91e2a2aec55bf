import { isHeading } from "../paper/headings.js";
import { countTokens, truncateToTokens } from "../llm/tokenizer.js";

/** One section of paper.md: its heading line (may be empty for text before the first) and its text. */
interface PaperSection {
  heading: string;
  text: string;
  tokens: number;
}

export interface PaperExcerpt {
  text: string;
  tokens: number;
  /** Sections of the paper, and how many of them are in the excerpt (whole or cut). */
  sections: number;
  kept: number;
  /** Headings of the sections left out, in paper order. */
  omitted: string[];
  /** The heading of a section cut to fit, if one was. */
  cut?: string;
}

/** Sections that rarely help an implementation: read last. */
const LOW_VALUE = /^(#+\s*)?(\d+\.?\s+)?(references|bibliography|acknowledge?ments?|ethics statement|broader impacts?|limitations)\b/i;
const STOP = new Set(
  "about above after again against because before being below between both could does doing during each from further have having here itself just more most other over same should some such than that their them then there these they this those through under until very what when where which while with would your implement function return returns value values given using paper should must".split(
    " ",
  ),
);

/** Splits paper.md at Markdown headings ("## Page 3") and at lines that read as section titles ("3.2 Decoding"). */
async function splitPaper(markdown: string): Promise<PaperSection[]> {
  const out: { heading: string; lines: string[] }[] = [{ heading: "", lines: [] }];
  for (const line of markdown.split(/\r?\n/)) {
    if (/^#{1,6}\s/.test(line) || (line.trim() !== "" && isHeading(line))) out.push({ heading: line.trim(), lines: [line] });
    else out[out.length - 1]!.lines.push(line);
  }
  const sections = out.filter((s) => s.lines.join("").trim() !== "");
  return Promise.all(
    sections.map(async (s) => {
      const text = s.lines.join("\n").trim() + "\n";
      return { heading: s.heading, text, tokens: await countTokens(text) };
    }),
  );
}

/**
 * The paper trimmed to `budget` tokens, by whole sections: the first section
 * (title, abstract) always, then the sections that share the most words with
 * `focus` (the instruction and the target names), section numbers the focus
 * names ("Section 4") first, references and the like last. Kept sections stay
 * in paper order, with one line naming what was left out; the best section
 * that did not fit whole is cut to the space left when that is worth it.
 */
export async function excerptPaper(markdown: string, budget: number, focus: string): Promise<PaperExcerpt> {
  const sections = await splitPaper(markdown);
  const total = sections.reduce((a, s) => a + s.tokens, 0);
  if (total <= budget) return { text: sections.map((s) => s.text).join("\n"), tokens: total, sections: sections.length, kept: sections.length, omitted: [] };
  const words = focusWords(focus);
  const numbers = new Set([...focus.matchAll(/\b(?:section|sec\.|§)\s*(\d+(?:\.\d+)*)/gi)].map((m) => m[1]!));
  const scored = sections.map((s, i) => ({ s, i, score: scoreSection(s, i, words, numbers) }));
  const order = [...scored].sort((a, b) => b.score - a.score || a.i - b.i);
  const marker = 40; // room for the "omitted" line
  let left = budget - marker;
  const keep = new Map<number, string>();
  let cut: string | undefined;
  for (const { s, i } of order) {
    if (s.tokens <= left) {
      keep.set(i, s.text);
      left -= s.tokens;
    }
  }
  const best = order.find(({ i }) => !keep.has(i));
  if (best && left >= 200) {
    keep.set(best.i, (await truncateToTokens(best.s.text, left - 10)) + "\n[… section cut to fit the prompt budget …]\n");
    cut = best.s.heading || "(untitled)";
  }
  const omitted = sections.filter((_, i) => !keep.has(i)).map((s) => s.heading || "(untitled)");
  const parts = sections.flatMap((_, i) => (keep.has(i) ? [keep.get(i)!] : []));
  if (omitted.length > 0)
    parts.push(`[… ${omitted.length} section(s) left out to fit the prompt budget: ${omitted.map((h) => h.replace(/^#+\s*/, "")).join("; ")} …]\n`);
  const text = parts.join("\n");
  return { text, tokens: await countTokens(text), sections: sections.length, kept: keep.size, omitted, ...(cut ? { cut } : {}) };
}

function focusWords(focus: string): Set<string> {
  const words = focus.toLowerCase().match(/[a-z][a-z0-9_]{3,}/g) ?? [];
  return new Set(words.flatMap((w) => w.split("_")).filter((w) => w.length >= 4 && !STOP.has(w)));
}

function scoreSection(s: PaperSection, index: number, words: Set<string>, numbers: Set<string>): number {
  if (index === 0) return Number.POSITIVE_INFINITY;
  const heading = s.heading.replace(/^#+\s*/, "");
  if (LOW_VALUE.test(heading)) return -1;
  const num = /^(\d+(?:\.\d+)*)/.exec(heading)?.[1];
  const named = num !== undefined && [...numbers].some((n) => num === n || num.startsWith(`${n}.`)) ? 1000 : 0;
  const tokens = s.text.toLowerCase().match(/[a-z][a-z0-9]{3,}/g) ?? [];
  let hits = 0;
  for (const t of tokens) if (words.has(t)) hits++;
  // density, so a long section does not win by length alone
  return named + (hits / Math.sqrt(Math.max(1, tokens.length))) * 10;
}
