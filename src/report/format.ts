import { VERDICTS } from "../run-folder/index.js";
import type { OverallPassAtK, VerdictCounts } from "./types.js";

/** Characters XML 1.0 forbids (C0 controls other than tab/LF/CR, lone surrogates, U+FFFE/U+FFFF). */
const XML_INVALID = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Text safe inside HTML element content and double-quoted attribute values. */
export function escapeHtml(text: string): string {
  return escapeMarkup(text, "&#39;");
}

/** Text safe in XML 1.0 content and attributes; characters XML cannot hold become U+FFFD. */
export function escapeXml(text: string): string {
  return escapeMarkup(text, "&apos;").replace(/\n/g, "&#10;").replace(/\r/g, "&#13;").replace(/\t/g, "&#9;");
}

/** Characters XML cannot hold become U+FFFD; the five markup characters become references (`apos`: the apostrophe's). */
function escapeMarkup(text: string, apos: string): string {
  return text.replace(XML_INVALID, "\uFFFD").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, apos);
}

/** Text for XML element content: newlines kept as they are, so logs stay readable. */
export function escapeXmlText(text: string): string {
  return text.replace(XML_INVALID, "\uFFFD").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * Text for one line of Markdown (a table cell or a list item): newlines become
 * spaces and every character Markdown or a GFM table could read as syntax is escaped.
 */
export function escapeMarkdown(text: string): string {
  return text
    .replace(XML_INVALID, "\uFFFD")
    .replace(/\s*[\r\n]+\s*/g, " ")
    .replace(/[\\`*_[\]<>|~&]/g, (c) => `\\${c}`);
}

/** Shorten to at most `max` characters, marking the cut. */
export function truncate(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}

/** 0.2777… → "27.8%"; null → "n/a". */
export function formatRate(value: number | null): string {
  return value === null ? "n/a" : `${(value * 100).toFixed(1)}%`;
}

/** "2 passed, 1 failed, 1 infra": non-zero counts in verdict order; "none" when all are zero. */
export function formatVerdictCounts(counts: VerdictCounts): string {
  const parts = VERDICTS.filter((v) => counts[v] > 0).map((v) => `${counts[v]} ${v}`);
  return parts.length === 0 ? "none" : parts.join(", ");
}

/** "@1 50.0%, @2 83.3%": a model's pass@k list; empty when there is only pass@1. */
export function formatPassAtKList(list: OverallPassAtK[]): string {
  return list.length <= 1 ? "" : list.map((p) => `@${p.k} ${formatRate(p.value)}`).join(", ");
}

export function formatSeconds(seconds: number): string {
  return seconds < 10 ? `${seconds.toFixed(2)} s` : `${seconds.toFixed(1)} s`;
}

/** An inline code span for a Markdown table cell: fences longer than any backtick run inside, pipes escaped for GFM tables. */
export function codeSpanMarkdown(text: string): string {
  const clean = text
    .replace(XML_INVALID, "\uFFFD")
    .replace(/\s*[\r\n]+\s*/g, " ")
    .replace(/\|/g, "\\|");
  const longest = Math.max(0, ...(clean.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  const pad = clean.startsWith("`") || clean.endsWith("`") ? " " : "";
  return `${fence}${pad}${clean}${pad}${fence}`;
}

/** "[12.5%, 50.0%]" for a bootstrap interval; "" without one. */
export function formatInterval(ci: { low: number; high: number } | null | undefined): string {
  return ci ? `[${formatRate(ci.low)}, ${formatRate(ci.high)}]` : "";
}

/** The judge's majority classes over a group: "1 incorrect logic, 2 impl. error, 3 correct"; "—" for a group never judged. */
export function formatJudgeClasses(j: { classes: Record<string, number>; judged: number; no_code: number; infra: number } | undefined): string {
  if (!j) return "—";
  const c = j.classes;
  const parts = [`${c["fully-correct"] ?? 0} correct`, `${c["implementation-error"] ?? 0} impl. error`, `${c["incorrect-logic"] ?? 0} wrong logic`];
  if (j.no_code > 0) parts.push(`${j.no_code} no code`);
  if (j.infra > 0) parts.push(`${j.infra} infra`);
  return parts.join(", ");
}

/** Cohen's kappa to two decimals; "n/a" when undefined. */
export function formatKappa(kappa: number | null): string {
  return kappa === null ? "n/a" : kappa.toFixed(2);
}

/** 1234567 → "1,234,567". */
export function formatCount(n: number): string {
  return n.toLocaleString("en-US");
}

/** A model as reports name it: with its level where the run has one, so two levels never read as one model. */
export function modelLabel(m: { model: string; level?: string }): string {
  return m.level === undefined ? m.model : `${m.model} [${m.level}]`;
}
