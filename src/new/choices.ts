import { LmrError, type ErrorCode } from "../core/errors.js";
import { measureEditDistance } from "../manifest/suggest.js";
import { CATEGORIES, type Category, type LineRef, type MaskMode } from "../manifest/types.js";

/*
 * Parsing and checking of the answers `lmr new` takes, flag or prompt alike.
 * Each parser returns the value or throws an LmrError (kind "usage") whose
 * message names the flag, so the wizard can show the same text as a
 * validation message and the flag path can exit 2 with it.
 */

export const MODES: readonly MaskMode[] = ["body", "region", "class"];
export const TASK_ID_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const TASK_ID_MAX = 80;

export function usageError(flag: string, message: string, hint?: string, code: ErrorCode = "new/bad-value"): LmrError {
  return new LmrError({ code, message: `${flag}: ${message}`, ...(hint !== undefined ? { hint } : {}) });
}

/** The `n` known words closest to `word` (edit distance, then a shared substring first), for "did you mean" lists. */
export function rankNearMatches(word: string, known: readonly string[], n = 5): string[] {
  const w = word.toLowerCase();
  return known
    .map((k) => {
      const lk = k.toLowerCase();
      const contains = w !== "" && (lk.includes(w) || w.includes(lk.split("/").pop() ?? lk));
      return { k, score: measureEditDistance(w, lk) - (contains ? 100 : 0) };
    })
    .sort((a, b) => a.score - b.score || a.k.localeCompare(b.k))
    .slice(0, n)
    .map((x) => x.k);
}

export function parseText(flag: string, raw: string): string {
  const v = raw.trim();
  if (v === "") throw usageError(flag, "is empty", "give a non-empty value");
  return v;
}

export function parseYear(raw: string): number {
  const v = raw.trim();
  const n = Number(v);
  if (!/^\d{4}$/.test(v) || n < 1900 || n > 2100) throw usageError("--year", `'${raw}' is not a year between 1900 and 2100`, "e.g. --year 2023");
  return n;
}

export function parseUrl(flag: string, raw: string): string {
  const v = raw.trim();
  let u: URL | undefined;
  try {
    u = new URL(v);
  } catch {
    u = undefined;
  }
  if (!u || !/^https?:$/.test(u.protocol))
    throw usageError(flag, `'${raw}' is not an http(s) URL`, "give a stable link, e.g. https://arxiv.org/abs/2305.18290");
  return v;
}

export function parseMode(raw: string): MaskMode {
  const v = raw.trim().toLowerCase();
  if ((MODES as readonly string[]).includes(v)) return v as MaskMode;
  throw usageError("--mode", `'${raw}' is not a mask mode`, `choose one of: ${MODES.join(", ")}`);
}

/** A category by its exact name (any case), or by a word or prefix that picks exactly one of the nine. */
export function parseCategory(raw: string): Category {
  const v = raw.trim().toLowerCase();
  const exact = CATEGORIES.find((c) => c.toLowerCase() === v);
  if (exact) return exact;
  const partial = v === "" ? [] : CATEGORIES.filter((c) => c.toLowerCase().includes(v));
  if (partial.length === 1) return partial[0]!;
  const listed = (partial.length > 1 ? partial : CATEGORIES).map((c) => `"${c}"`).join(", ");
  throw usageError("--category", partial.length > 1 ? `'${raw}' matches several categories` : `'${raw}' is not a category`, `choose one of: ${listed}`);
}

export function parseTaskId(raw: string): string {
  const v = raw.trim();
  if (!TASK_ID_PATTERN.test(v) || v.length > TASK_ID_MAX) {
    const fixed = slugify(v).slice(0, TASK_ID_MAX).replace(/-+$/, "");
    throw usageError(
      "--id",
      `'${raw}' is not a task id (lowercase letters, digits and single hyphens, at most ${TASK_ID_MAX} characters)`,
      fixed !== "" ? `e.g. --id ${fixed}` : "e.g. --id dpo-preference-loss",
    );
  }
  return v;
}

/** A region bound: a 1-based line number, or text that the wanted line contains. */
export function parseLineRef(flag: string, raw: string): LineRef {
  const v = raw.trim();
  if (v === "") throw usageError(flag, "is empty", "give a line number of the file or text that the line contains");
  if (/^\d+$/.test(v)) {
    const line = Number(v);
    if (line < 1) throw usageError(flag, "line numbers start at 1");
    return { line };
  }
  return { anchor: v };
}

export function parseLine(raw: string): number {
  const v = raw.trim();
  if (!/^\d+$/.test(v) || Number(v) < 1) throw usageError("--line", `'${raw}' is not a line number`, "give the 1-based line of the wanted def/class");
  return Number(v);
}

/** Lowercase words joined by single hyphens: "Trainer.train_step" → "trainer-train-step". */
export function slugify(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/([a-z0-9])([A-Z])/g, "$1-$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1-$2")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

const STOP_WORDS = new Set([
  "a",
  "an",
  "the",
  "of",
  "for",
  "and",
  "or",
  "to",
  "in",
  "on",
  "with",
  "via",
  "by",
  "from",
  "is",
  "are",
  "your",
  "its",
  "as",
  "at",
  "how",
  "what",
  "when",
  "towards",
  "toward",
]);

/** Acronyms of the field, not of a method: "LLM" in "Muon is Scalable for LLM Training" names no method. */
const FIELD_ACRONYMS = new Set([
  "ai",
  "ml",
  "nlp",
  "cv",
  "rl",
  "llm",
  "llms",
  "lm",
  "lms",
  "vlm",
  "vlms",
  "mllm",
  "mllms",
  "gpu",
  "gpus",
  "tpu",
  "cnn",
  "cnns",
  "rnn",
  "rnns",
  "gnn",
  "gnns",
  "qa",
  "sota",
  "ood",
  "iid",
]);

/**
 * A short name for the paper, meant to be its method's name: the acronym or
 * single word before a colon ("ROUGE: ...", "DoLa: ..."), the single word a
 * sentence-like title is about ("Muon is Scalable for LLM Training"), a word
 * written in capitals that is not just the field's ("GRPO", never "LLM"), or
 * the initials of the leading words ("Direct Preference Optimization: ..." → "dpo").
 */
export function shortNameOf(title: string): string {
  const head = title.includes(":") ? title.slice(0, title.indexOf(":")) : title;
  const words = head.split(/[\s/]+/).filter((w) => w !== "");
  if (words.length === 1) return slugify(words[0]!.toLowerCase()).slice(0, 20);
  const subject = /^([A-Za-z][A-Za-z0-9-]*)\s+(?:is|are|as)\s/i.exec(title.trim());
  if (subject && !STOP_WORDS.has(subject[1]!.toLowerCase()) && !FIELD_ACRONYMS.has(subject[1]!.toLowerCase()))
    return slugify(subject[1]!.toLowerCase()).slice(0, 20);
  const acronym = title
    .split(/[\s:,;()/]+/)
    .find(
      (w) =>
        /^[A-Za-z][A-Za-z0-9-]*$/.test(w) && (w.match(/[A-Z]/g) ?? []).length >= 2 && !/^[A-Z][a-z]+-[A-Z]/.test(w) && !FIELD_ACRONYMS.has(w.toLowerCase()),
    );
  if (acronym) return slugify(acronym.toLowerCase()).replace(/-/g, "").slice(0, 12);
  const initials = words
    .flatMap((w) => w.split("-"))
    .filter((w) => w !== "" && !STOP_WORDS.has(w.toLowerCase()))
    .map((w) => w[0]!.toLowerCase())
    .filter((c) => /[a-z0-9]/.test(c))
    .join("");
  return initials.slice(0, 6);
}

/** `<paper short name>-<symbol>` as a valid task id, e.g. "dpo-preference-loss". */
export function suggestTaskId(title: string, symbol: string): string {
  const short = shortNameOf(title);
  const sym = slugify(symbol);
  const parts = [short, sym].filter((p) => p !== "");
  // the symbol may already start with the short name ("dpo_loss" in a DPO paper)
  const id = sym.startsWith(`${short}-`) || sym === short ? sym : parts.join("-");
  return id.slice(0, TASK_ID_MAX).replace(/-+$/, "") || "task";
}
