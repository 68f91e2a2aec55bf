import { sha256 } from "../core/hash.js";
import { compareIds, type Verdict } from "../run-folder/index.js";
import { comparisonRows, hasUsage, isJudged } from "./comparison.js";
import {
  escapeHtml as esc,
  formatCount,
  formatInterval,
  formatJudgeClasses,
  formatKappa,
  formatPassAtKList,
  formatRate,
  truncate,
  modelLabel,
} from "./format.js";
import { sampleId } from "./read-run.js";
import type { SampleDetails } from "./sample-details.js";
import type { SampleSummary, Summary, TaskSummary } from "./types.js";

const CLASS_LABEL: Record<string, string> = { "fully-correct": "correct", "implementation-error": "impl. error", "incorrect-logic": "wrong logic" };

/** The anchor of one sample's panel. */
export function sampleAnchor(model: string, taskId: string, sample: string): string {
  return `s-${sha256(sampleId({ model, task_id: taskId, sample })).slice(0, 16)}`;
}

/** The model × category table, tests vs judge, tokens: the same numbers the Markdown and JSON carry. */
export function renderComparison(s: Summary): string {
  const judged = isJudged(s);
  const head = `<tr><th>Model</th><th>Category</th><th class="num">Tasks</th><th class="num">pass@1</th><th>95% CI</th><th>pass@k</th>${judged ? "<th>Judge</th>" : ""}</tr>`;
  const rows = comparisonRows(s).map(
    (r) =>
      `<tr${r.category === null ? ' class="overall"' : ""}><td><code>${esc(r.model)}</code></td><td>${r.category === null ? "<strong>all</strong>" : esc(r.category)}</td>` +
      `<td class="num">${r.scored_tasks} of ${r.tasks}</td><td class="num">${esc(formatRate(r.pass_at_1))}</td><td>${esc(formatInterval(r.pass_at_1_ci))}</td><td>${esc(formatPassAtKList(r.pass_at_k))}</td>` +
      (judged ? `<td>${esc(formatJudgeClasses(r.judge))}</td>` : "") +
      "</tr>",
  );
  const parts = [
    `<h2>Models by category</h2>`,
    `<div class="table-wrap"><table>\n<thead>${head}</thead>\n<tbody>\n${rows.join("\n")}\n</tbody>\n</table></div>`,
    '<p class="note">95% CI: percentile bootstrap over the scored tasks (2000 resamples, fixed seed).</p>',
  ];
  if (judged) {
    const agree = s.models.map((m) => {
      const j = m.judge;
      if (!j) return `<tr><td><code>${esc(modelLabel(m))}</code></td><td colspan="4">not judged</td></tr>`;
      const a = j.tests_vs_judge;
      return (
        `<tr><td><code>${esc(modelLabel(m))}</code></td><td>${j.judge_models.map((x) => `<code>${esc(x)}</code>`).join(", ")}</td>` +
        `<td><table class="confusion"><tr><th></th><th>judge correct</th><th>judge not</th></tr><tr><th>tests pass</th><td class="num">${a.both_pass}</td><td class="num">${a.tests_only}</td></tr><tr><th>tests fail</th><td class="num">${a.judge_only}</td><td class="num">${a.both_fail}</td></tr></table></td>` +
        `<td class="num">${esc(formatRate(a.observed))} of ${a.samples}</td><td class="num">κ ${esc(formatKappa(a.kappa))}</td></tr>`
      );
    });
    parts.push(
      "<h3>Tests vs judge</h3>",
      `<div class="table-wrap"><table>\n<thead><tr><th>Model</th><th>Judge</th><th>Confusion</th><th class="num">Agreement</th><th class="num">Cohen's κ</th></tr></thead>\n<tbody>\n${agree.join("\n")}\n</tbody>\n</table></div>`,
    );
  }
  if (hasUsage(s)) {
    const usage = s.models.map((m) => {
      const g = m.usage?.generation;
      const j = m.usage?.judge;
      return `<tr><td><code>${esc(modelLabel(m))}</code></td><td class="num">${g ? formatCount(g.prompt_tokens) : "—"}</td><td class="num">${g ? formatCount(g.completion_tokens) : "—"}</td><td class="num">${g?.cost_usd !== undefined ? `$${g.cost_usd.toFixed(4)}` : "—"}</td><td class="num">${j ? formatCount(j.prompt_tokens) : "—"}</td><td class="num">${j ? formatCount(j.completion_tokens) : "—"}</td><td class="num">${j?.cost_usd !== undefined ? `$${j.cost_usd.toFixed(4)}` : "—"}</td></tr>`;
    });
    parts.push(
      "<h3>Tokens and cost</h3>",
      `<div class="table-wrap"><table>\n<thead><tr><th>Model</th><th class="num">Generation prompt</th><th class="num">Generation completion</th><th class="num">Generation cost</th><th class="num">Judge prompt</th><th class="num">Judge completion</th><th class="num">Judge cost</th></tr></thead>\n<tbody>\n${usage.join("\n")}\n</tbody>\n</table></div>`,
    );
  }
  return `<section id="compare">\n${parts.join("\n")}\n</section>`;
}

/**
 * Tasks down, models across; each cell lists the samples as links to their
 * panel. Panels are hidden until their anchor is the page's target (CSS
 * :target, no script), and then open as a drawer beside the matrix.
 */
export function renderMatrix(s: Summary, details: Map<string, SampleDetails>): string {
  const models = s.models.map((m) => modelLabel(m));
  const byTask = new Map<string, Map<string, TaskSummary>>();
  for (const m of s.models) for (const t of m.tasks) (byTask.get(t.task_id) ?? byTask.set(t.task_id, new Map()).get(t.task_id)!).set(modelLabel(m), t);
  const taskIds = [...byTask.keys()].sort(compareIds);
  const head = `<tr><th>Task</th>${models.map((m) => `<th><code>${esc(m)}</code></th>`).join("")}</tr>`;
  const rows = taskIds.map((id) => {
    const cells = models.map((m) => {
      const t = byTask.get(id)!.get(m);
      if (!t) return '<td class="cell empty">—</td>';
      const links = t.results.map(
        (r) =>
          `<a class="badge ${r.verdict}" href="#${sampleAnchor(m, id, r.sample)}" title="${esc(truncate(`${r.verdict}${r.judge?.majority ? `; judge: ${r.judge.majority}` : ""}${r.reason ? `; ${r.reason}` : ""}`, 300))}">#${esc(r.sample)}${r.judge?.majority ? ` ${judgeMark(r.judge.majority)}` : ""}</a>`,
      );
      return `<td class="cell"><div class="badges">${links.join(" ")}</div><div class="cell-rate">pass@1 ${esc(formatRate(t.pass_at_1))}</div></td>`;
    });
    return `<tr><td><code>${esc(id)}</code></td>${cells.join("")}</tr>`;
  });
  const panels = s.models.flatMap((m) =>
    m.tasks.flatMap((t) =>
      t.results.map((r) =>
        renderPanel(
          modelLabel(m),
          t,
          r,
          details.get(
            sampleId({ model: m.model, task_id: t.task_id, sample: r.sample, ...((m.level ?? s.run.level) ? { level: (m.level ?? s.run.level)! } : {}) }),
          ),
        ),
      ),
    ),
  );
  return [
    '<section id="matrix">',
    "<h2>Tasks × models</h2>",
    `<div class="table-wrap"><table class="matrix">\n<thead>${head}</thead>\n<tbody>\n${rows.join("\n")}\n</tbody>\n</table></div>`,
    "<p class=\"note\">Each sample is a link: its failing tests, its diff against the masked file, the judge's rationale and the agent's log open beside the matrix. Judge marks: ✓ fully correct, ≈ implementation error, ✗ incorrect logic.</p>",
    `<div class="panels">\n${panels.join("\n")}\n</div>`,
    "</section>",
  ].join("\n");
}

function judgeMark(c: string): string {
  return c === "fully-correct" ? "✓" : c === "implementation-error" ? "≈" : "✗";
}

function renderPanel(model: string, t: TaskSummary, r: SampleSummary, d: SampleDetails | undefined): string {
  const failing = r.failing_tests.length === 0 ? "<p>None.</p>" : `<ul>${r.failing_tests.map((x) => `<li><code>${esc(x)}</code></li>`).join("")}</ul>`;
  const judge = r.judge
    ? `<p><strong>${esc(r.judge.majority ? (CLASS_LABEL[r.judge.majority] ?? r.judge.majority) : r.judge.status)}</strong>${r.judge.agreement !== null ? `, ${esc(formatRate(r.judge.agreement))} of ${r.judge.votes} votes` : ""} — <code>${esc(r.judge.judge_model)}</code></p>` +
      ((d?.votes.length ?? 0) > 0
        ? `<ol class="votes">${d!.votes.map((v) => `<li>${v.class ? `<strong>${esc(CLASS_LABEL[v.class] ?? v.class)}</strong>: ${esc(v.rationale ?? "")}` : `<em>no class</em>: ${esc(v.error ?? "")}`}</li>`).join("")}</ol>`
        : "")
    : "<p>Not judged (run <code>lmr judge</code>).</p>";
  const diff =
    d?.diff !== undefined ? `<pre class="diff">${renderDiff(d.diff)}</pre>` : "<p>No diff: the submission did not apply (or was graded by an older lmr).</p>";
  const agent =
    (d?.agentLogs.length ?? 0) > 0
      ? d!.agentLogs.map((f) => `<details open><summary><code>agent/${esc(f.name)}</code></summary><pre>${esc(f.text)}</pre></details>`).join("")
      : "<p>No agent log in this sample's folder.</p>";
  const testLog = d?.testLog ? `<details><summary>Test output (log.txt)</summary><pre>${esc(d.testLog)}</pre></details>` : "";
  return [
    `<article class="sample" id="${sampleAnchor(model, t.task_id, r.sample)}">`,
    `<p class="close"><a href="#matrix">close ✕</a></p>`,
    `<h3><code>${esc(t.task_id)}</code> #${esc(r.sample)} — <code>${esc(model)}</code> <span class="badge ${r.verdict as Verdict}">${esc(r.verdict)}</span></h3>`,
    r.reason ? `<p class="reason">${esc(truncate(r.reason, 600))}</p>` : "",
    "<h4>Failing tests</h4>",
    failing,
    "<h4>Judge</h4>",
    judge,
    "<h4>Diff against the masked file</h4>",
    diff,
    "<h4>Agent log</h4>",
    agent,
    testLog,
    "</article>",
  ]
    .filter((x) => x !== "")
    .join("\n");
}

function renderDiff(diff: string): string {
  return diff
    .split("\n")
    .map((line) => {
      const cls =
        line.startsWith("+++") || line.startsWith("---")
          ? "file"
          : line.startsWith("+")
            ? "add"
            : line.startsWith("-")
              ? "del"
              : line.startsWith("@@")
                ? "hunk"
                : "";
      return cls ? `<span class="${cls}">${esc(line)}</span>` : esc(line);
    })
    .join("\n");
}
