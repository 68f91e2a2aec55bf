import { escapeXml as attr, escapeXmlText as text } from "./format.js";
import { compareIds } from "./read-run.js";
import type { SampleSummary, Summary, SummaryProblem } from "./types.js";

interface Case {
  name: string;
  time: number;
  kind: "ok" | "failure" | "error" | "skipped";
  type?: string;
  message?: string;
  body?: string;
}

interface Suite {
  name: string;
  category?: string;
  cases: Case[];
}

const UNREADABLE = /^results\/([^/]+)\/([^/]+)\/result\.json$/;

/**
 * JUnit XML for CI: one <testsuite> per task, one <testcase> per sample.
 * failed → <failure>; error/timeout/invalid → <error type=verdict>; infra → <skipped>.
 * A sample whose result.json could not be read is an <error type="unreadable">, so CI sees it.
 */
export function renderJunit(summary: Summary): string {
  const suites = new Map<string, Suite>();
  for (const t of summary.tasks) {
    suites.set(t.task_id, { name: t.task_id, category: t.category, cases: t.results.map(toCase) });
  }
  for (const p of summary.problems) addUnreadable(suites, p);
  const list = [...suites.values()].sort((a, b) => compareIds(a.name, b.name));
  const all = list.flatMap((s) => s.cases);
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>'];
  lines.push(`<testsuites name="${attr(`lmr run ${summary.run.run_id}`)}" ${countAttrs(all)}>`);
  for (const s of list) {
    lines.push(`  <testsuite name="${attr(s.name)}" ${countAttrs(s.cases)} timestamp="${attr(summary.generated_at.replace(/Z$/, ""))}">`);
    if (s.category !== undefined) {
      lines.push("    <properties>", `      <property name="category" value="${attr(s.category)}"/>`, "    </properties>");
    }
    for (const c of s.cases) lines.push(...renderCase(s.name, c));
    lines.push("  </testsuite>");
  }
  lines.push("</testsuites>", "");
  return lines.join("\n");
}

function toCase(r: SampleSummary): Case {
  const name = `sample ${r.sample} (${r.model})`;
  const reason = r.reason ?? r.verdict;
  const body = [
    r.reason,
    r.failing_tests.length > 0 ? `failing tests:\n${r.failing_tests.map((id) => `  ${id}`).join("\n")}` : undefined,
    `tests: ${r.counts.passed} passed, ${r.counts.failed} failed, ${r.counts.errors} errors, ${r.counts.skipped} skipped`,
  ]
    .filter((x): x is string => x !== undefined && x !== "")
    .join("\n");
  switch (r.verdict) {
    case "passed":
      return { name, time: r.duration_s, kind: "ok" };
    case "failed":
      return { name, time: r.duration_s, kind: "failure", type: "failed", message: reason, body };
    case "infra":
      return { name, time: r.duration_s, kind: "skipped", message: `infra: ${reason}` };
    default:
      return { name, time: r.duration_s, kind: "error", type: r.verdict, message: reason, body };
  }
}

function addUnreadable(suites: Map<string, Suite>, p: SummaryProblem): void {
  const m = p.file === undefined ? null : UNREADABLE.exec(p.file);
  if (m === null) return;
  const [, task = "", sample = ""] = m;
  let suite = suites.get(task);
  if (suite === undefined) {
    suite = { name: task, cases: [] };
    suites.set(task, suite);
  }
  suite.cases.push({ name: `sample ${sample}`, time: 0, kind: "error", type: "unreadable", message: p.message, body: [p.message, p.hint].filter(Boolean).join("\n") });
  suite.cases.sort((a, b) => compareIds(a.name, b.name));
}

function renderCase(suite: string, c: Case): string[] {
  const open = `    <testcase classname="${attr(suite)}" name="${attr(c.name)}" time="${c.time.toFixed(3)}"`;
  if (c.kind === "ok") return [`${open}/>`];
  const message = c.message === undefined ? "" : ` message="${attr(c.message)}"`;
  const type = c.type === undefined ? "" : ` type="${attr(c.type)}"`;
  const inner =
    c.kind === "skipped"
      ? `      <skipped${message}/>`
      : `      <${c.kind}${type}${message}>${text(c.body ?? "")}</${c.kind}>`;
  return [`${open}>`, inner, "    </testcase>"];
}

function countAttrs(cases: Case[]): string {
  const n = (k: Case["kind"]): number => cases.filter((c) => c.kind === k).length;
  const time = cases.reduce((a, c) => a + c.time, 0);
  return `tests="${cases.length}" failures="${n("failure")}" errors="${n("error")}" skipped="${n("skipped")}" time="${time.toFixed(3)}"`;
}
