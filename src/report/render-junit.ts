import { compareIds } from "../run-folder/index.js";
import { escapeXml as attr, escapeXmlText as text, modelLabel } from "./format.js";
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
  model: string;
  task: string;
  properties: [string, string][];
  cases: Case[];
}

const UNREADABLE = /^results\/([^/]+)\/([^/]+)\/([^/]+)\/result\.json$/;
const UNREADABLE_V1 = /^results\/([^/]+)\/([^/]+)\/result\.json$/;

/**
 * JUnit XML for CI: one <testsuite> per (model, task), named "task (model)",
 * one <testcase> per sample; the suite's properties give the model, category,
 * set and that model's pass@k on the task.
 * failed → <failure>; error/timeout/invalid → <error type=verdict>; infra → <skipped>.
 * A sample whose result.json could not be read is an <error type="unreadable">, so CI sees it.
 */
export function renderJunit(summary: Summary): string {
  const suites = new Map<string, Suite>();
  for (const m of summary.models) {
    for (const t of m.tasks) {
      const properties: [string, string][] = [
        ["model", m.model],
        ...(m.level ? [["level", m.level] as [string, string]] : []),
        ["category", t.category],
        ["set", t.set],
        ...t.pass_at_k.map((p): [string, string] => [`pass@${p.k}`, p.value.toFixed(6)]),
      ];
      suites.set(suiteKey(modelLabel(m), t.task_id), { model: modelLabel(m), task: t.task_id, properties, cases: t.results.map(toCase) });
    }
  }
  for (const p of summary.problems) addUnreadable(suites, summary, p);
  const list = [...suites.values()].sort((a, b) => compareIds(a.model, b.model) || compareIds(a.task, b.task));
  const all = list.flatMap((s) => s.cases);
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>'];
  lines.push(`<testsuites name="${attr(`lmr run ${summary.run.run_id}`)}" ${countAttrs(all)}>`);
  for (const s of list) {
    const name = `${s.task} (${s.model})`;
    lines.push(`  <testsuite name="${attr(name)}" ${countAttrs(s.cases)} timestamp="${attr(summary.generated_at.replace(/Z$/, ""))}">`);
    lines.push("    <properties>", ...s.properties.map(([k, v]) => `      <property name="${attr(k)}" value="${attr(v)}"/>`), "    </properties>");
    for (const c of s.cases) lines.push(...renderCase(name, c));
    lines.push("  </testsuite>");
  }
  lines.push("</testsuites>", "");
  return lines.join("\n");
}

function suiteKey(model: string, task: string): string {
  return JSON.stringify([model, task]);
}

function toCase(r: SampleSummary): Case {
  const name = `sample ${r.sample}`;
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

/** The model and task an unreadable result.json belongs to, from its path (layout 2, or 1). */
function placeUnreadable(summary: Summary, file: string | undefined): { model: string; task: string; sample: string } | undefined {
  const m = file === undefined ? null : UNREADABLE.exec(file);
  if (m !== null) {
    const [, dir = "", task = "", sample = ""] = m;
    return { model: summary.models.find((x) => x.dir === dir)?.model ?? dir, task, sample };
  }
  const v1 = file === undefined ? null : UNREADABLE_V1.exec(file);
  if (v1 === null) return undefined;
  const [, task = "", sample = ""] = v1;
  return { model: summary.models.length === 1 ? summary.models[0]!.model : "unknown", task, sample };
}

function addUnreadable(suites: Map<string, Suite>, summary: Summary, p: SummaryProblem): void {
  const where = placeUnreadable(summary, p.file);
  if (where === undefined) return;
  const key = suiteKey(where.model, where.task);
  let suite = suites.get(key);
  if (suite === undefined) {
    suite = { model: where.model, task: where.task, properties: [["model", where.model]], cases: [] };
    suites.set(key, suite);
  }
  suite.cases.push({
    name: `sample ${where.sample}`,
    time: 0,
    kind: "error",
    type: "unreadable",
    message: p.message,
    body: [p.message, p.hint].filter(Boolean).join("\n"),
  });
  suite.cases.sort((a, b) => compareIds(a.name, b.name));
}

function renderCase(suite: string, c: Case): string[] {
  const open = `    <testcase classname="${attr(suite)}" name="${attr(c.name)}" time="${c.time.toFixed(3)}"`;
  if (c.kind === "ok") return [`${open}/>`];
  const message = c.message === undefined ? "" : ` message="${attr(c.message)}"`;
  const type = c.type === undefined ? "" : ` type="${attr(c.type)}"`;
  const inner = c.kind === "skipped" ? `      <skipped${message}/>` : `      <${c.kind}${type}${message}>${text(c.body ?? "")}</${c.kind}>`;
  return [`${open}>`, inner, "    </testcase>"];
}

function countAttrs(cases: Case[]): string {
  const n = (k: Case["kind"]): number => cases.filter((c) => c.kind === k).length;
  const time = cases.reduce((a, c) => a + c.time, 0);
  return `tests="${cases.length}" failures="${n("failure")}" errors="${n("error")}" skipped="${n("skipped")}" time="${time.toFixed(3)}"`;
}
