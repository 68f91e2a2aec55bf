import { describe, expect, it } from "vitest";
import type { JudgeClass, SampleJudgement, SampleResult, Verdict } from "../run-folder/index.js";
import { modelKey, sampleId, type LoadedRun } from "./read-run.js";
import { renderHtml } from "./render-html.js";
import { sampleAnchor } from "./render-html-compare.js";
import { renderMarkdown } from "./render-markdown.js";
import { buildSummary } from "./summarize.js";
import { validateSummary } from "./validate-summary.js";

function result(model: string, task: string, sample: string, verdict: Verdict, category = "Cat A"): SampleResult {
  return {
    task_id: task,
    sample,
    model,
    category,
    submission_hash: "h",
    verdict,
    counts: { passed: 1, failed: verdict === "failed" ? 1 : 0, errors: 0, skipped: 0 },
    tests: [{ id: "t.py::a", status: verdict === "failed" ? "failed" : "passed", time_s: 0.1 }],
    duration_s: 1,
    backend: "local",
    finished_at: "2025-01-01T00:00:00.000Z",
    toolkit_version: "0.1.0",
  };
}

function judged(r: SampleResult, classes: JudgeClass[]): SampleJudgement {
  const n = (c: JudgeClass) => classes.filter((x) => x === c).length;
  const majority = (["incorrect-logic", "implementation-error", "fully-correct"] as JudgeClass[]).reduce((a, b) => (n(b) > n(a) ? b : a));
  return {
    schema_version: 1,
    task_id: r.task_id,
    model: r.model,
    sample: r.sample,
    judge_model: "judge-x",
    submission_hash: "h",
    judge_key: "k",
    status: "judged",
    votes: classes.map((c, vote) => ({
      vote,
      class: c,
      rationale: `vote ${vote}: ${c} <b>`,
      cached: false,
      requests: 1,
      parse_failures: 0,
      usage: { prompt_tokens: 10, completion_tokens: 2 },
    })),
    majority,
    agreement: n(majority) / classes.length,
    requests: classes.length,
    parse_failures: 0,
    infra_votes: 0,
    usage: { prompt_tokens: 10 * classes.length, completion_tokens: 2 * classes.length, cost_usd: 0.001 },
    finished_at: "2025-01-01T00:00:00.000Z",
    toolkit_version: "0.1.0",
  };
}

// model m1: 4 samples over two categories; tests and judge disagree on one in each direction
const results = [
  result("m1", "a", "0", "passed"),
  result("m1", "a", "1", "failed"),
  result("m1", "b", "0", "passed", "Cat B"),
  result("m1", "b", "1", "failed", "Cat B"),
  result("m2", "a", "0", "passed"),
];
const judgements: Record<string, SampleJudgement> = {
  [sampleId(results[0]!)]: judged(results[0]!, ["fully-correct", "fully-correct", "implementation-error"]),
  [sampleId(results[1]!)]: judged(results[1]!, ["fully-correct", "fully-correct", "fully-correct"]),
  [sampleId(results[2]!)]: judged(results[2]!, ["incorrect-logic", "incorrect-logic", "fully-correct"]),
  [sampleId(results[3]!)]: judged(results[3]!, ["implementation-error", "incorrect-logic", "implementation-error"]),
};
const loaded: LoadedRun = {
  run: { run_id: "r" },
  layout: 2,
  requested_tasks: ["a", "b"],
  task_sets: {},
  models: [
    { model: "m1", dir: "m1", samples: 2 },
    { model: "m2", dir: "m2", samples: 1 },
  ],
  results,
  judgements,
  generation: { [modelKey({ model: "m1" })]: { prompt_tokens: 1000, completion_tokens: 200, cost_usd: 0.0014, source: "gen/generate.json" } },
  problems: [],
};

describe("the judge in the summary", () => {
  const s = buildSummary(loaded, { now: new Date("2025-02-01T00:00:00.000Z") });
  const m1 = s.models.find((m) => m.model === "m1")!;

  it("counts majority classes, mean agreement, the tests-vs-judge confusion and kappa, per model and per category", () => {
    expect(m1.judge).toMatchObject({
      judged: 4,
      no_code: 0,
      infra: 0,
      unjudged: 0,
      judge_models: ["judge-x"],
      classes: { "fully-correct": 2, "implementation-error": 1, "incorrect-logic": 1 },
    });
    expect(m1.judge!.mean_agreement).toBeCloseTo((2 / 3 + 1 + 2 / 3 + 2 / 3) / 4, 6);
    // pass+correct 1, pass+not 1, fail+correct 1, fail+not 1: po 0.5 = pe 0.5 → kappa 0
    expect(m1.judge!.tests_vs_judge).toEqual({ samples: 4, both_pass: 1, tests_only: 1, judge_only: 1, both_fail: 1, observed: 0.5, kappa: 0 });
    expect(m1.categories.map((c) => [c.category, c.judge?.classes["fully-correct"]])).toEqual([
      ["Cat A", 2],
      ["Cat B", 0],
    ]);
    expect(m1.tasks[0]!.results[0]!.judge).toMatchObject({ majority: "fully-correct", votes: 3, rationale: "vote 0: fully-correct <b>" });
    expect(m1.usage).toEqual({
      generation: { prompt_tokens: 1000, completion_tokens: 200, cost_usd: 0.0014, source: "gen/generate.json" },
      judge: { prompt_tokens: 120, completion_tokens: 24, cost_usd: 0.004 },
    });
    // a model nobody judged has no judge section, and its graded samples are not called judged
    expect(s.models.find((m) => m.model === "m2")!.judge).toBeUndefined();
  });

  it("is a summary the schema accepts", async () => {
    expect((await validateSummary(JSON.parse(JSON.stringify(s)))).problems).toEqual([]);
  });

  it("prints the same numbers in Markdown and HTML, escaped, with the matrix linking each sample to its panel", () => {
    const md = renderMarkdown(s);
    expect(md).toMatch(/\| `m1` \| `judge-x` \| 4 \| 1 \| 1 \| 1 \| 1 \| 50\.0% \| 0\.00 \| 75\.0% \|/);
    expect(md).toMatch(/\| `m2` \| not judged \|/);
    expect(md).toMatch(/\| `m1` \| 1,000 \| 200 \| \$0\.0014 \| 120 \| 24 \| \$0\.0040 \|/);
    const html = renderHtml(
      s,
      new Map([
        [
          sampleId(results[1]!),
          {
            diff: "--- a/x.py\n+++ b/x.py\n+bad <i>\n",
            agentLogs: [{ name: "stdout.txt", text: "agent says <hi>" }],
            votes: judgements[sampleId(results[1]!)]!.votes,
          },
        ],
      ]),
    );
    const anchor = sampleAnchor("m1", "a", "1");
    expect(html).toContain(`href="#${anchor}"`);
    const panel = html.slice(html.indexOf(`id="${anchor}"`), html.indexOf("</article>", html.indexOf(`id="${anchor}"`)));
    expect(panel).toContain('<span class="add">+bad &lt;i&gt;</span>');
    expect(panel).toContain("agent says &lt;hi&gt;");
    expect(panel).toContain("vote 2: fully-correct &lt;b&gt;");
    expect(panel).toContain("<li><code>t.py::a</code></li>");
    expect(html).not.toContain("<b>");
    expect(html).toContain("κ 0.00");
  });
});
