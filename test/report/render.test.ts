import { describe, expect, it } from "vitest";
import { renderHtml } from "../../src/report/render-html.js";
import { renderJunit } from "../../src/report/render-junit.js";
import { renderMarkdown } from "../../src/report/render-markdown.js";
import { renderReport } from "../../src/report/render.js";
import { summarizeRun } from "../../src/report/summarize.js";
import type { Summary } from "../../src/report/types.js";
import { FIXTURE_RUN, TWO_MODEL_RUN } from "./helpers.js";
import { checkXml } from "./xml-check.js";

const NOW = new Date("2025-02-01T12:00:00.000Z");
const summary = await summarizeRun(FIXTURE_RUN, { now: NOW });
const two = await summarizeRun(TWO_MODEL_RUN, { now: NOW });

/** The fixture summary with hostile text where run data goes into a report. */
function hostileSummary(): Summary {
  const s = structuredClone(summary);
  const m = s.models[0]!;
  const t = m.tasks[0]!;
  t.task_id = `<img src=x onerror=alert(1)>`;
  t.category = `A & B | "C"`;
  m.categories[0]!.category = `A & B | "C"`;
  m.model = `<b>model</b> | "x"`;
  t.results[0]!.reason = `<script>alert("x")</script> | pipe \u001b[31m & done`;
  s.run.run_id = `run <1>`;
  return s;
}

/** Markdown tables: runs of consecutive lines that start with "|". */
function tablesOf(md: string): string[][] {
  const tables: string[][] = [];
  let current: string[] = [];
  for (const line of md.split("\n")) {
    if (line.startsWith("|")) {
      current.push(line);
    } else if (current.length > 0) {
      tables.push(current);
      current = [];
    }
  }
  if (current.length > 0) tables.push(current);
  return tables;
}

/** Cells of a GFM table row: split on pipes not escaped by an odd run of backslashes. */
function countCells(row: string): number {
  let cells = 0;
  for (let i = 0; i < row.length; i++) {
    if (row[i] !== "|") continue;
    let slashes = 0;
    for (let j = i - 1; j >= 0 && row[j] === "\\"; j--) slashes++;
    if (slashes % 2 === 0) cells++;
  }
  return cells - 1;
}

describe("Markdown", () => {
  const md = renderMarkdown(summary);
  const lines = md.split("\n");

  it("has the models table, the model's headline, category table, task table and non-passing section", () => {
    expect(lines[0]).toBe("# lmr run 2025-01-15-fixture");
    expect(md).toContain("| `example-model-1` | 3 of 3 | 7 (6 graded) | 2 | 27.8% |  | 2 passed, 1 failed, 1 error, 1 timeout, 1 invalid, 1 infra |");
    expect(md).toContain("## Model `example-model-1`");
    expect(md).toContain("**pass@1: 27.8%** over 3 scored of 3 tasks; 7 samples (6 graded): 2 passed, 1 failed, 1 error, 1 timeout, 1 invalid, 1 infra.");
    expect(md).toContain("| Decoding \\& Search Strategies | 1 | 3 | 1 | 33.3% | 1 passed, 1 error, 1 timeout |");
    expect(md).toContain("| Training Objectives \\& Optimization Techniques | 2 | 4 | 1 | 25.0% | 1 passed, 1 failed, 1 invalid, 1 infra |");
    expect(md).toMatch(
      /\| `contrastive-decoding-step` \| core \| Decoding \\& Search Strategies \| 3 \| 1 \| 33\.3% \| @1 33\.3%, @2 66\.7%, @3 100\.0% \| 1 passed, 1 error, 1 timeout \| 42\.2 s \|/,
    );
    expect(md).toMatch(/\| `dpo-preference-loss` \| core \| .* \| 3 \| 1 \| 50\.0% \| @1 50\.0%, @2 100\.0% \|/);
    expect(md).toMatch(/\| `orpo-odds-ratio-loss` \| core \| .* \| 1 \| 0 \| 0\.0% \|/);
    // one set only: no set table
    expect(md).not.toContain("### Sets");
  });

  it("lists each non-passing sample with its verdict and escaped reason", () => {
    const section = md.slice(md.indexOf("### Samples that did not pass"), md.indexOf("## Problems"));
    for (const v of ["failed", "error", "timeout", "invalid", "infra"]) expect(section).toContain(`**${v}**`);
    expect(section).not.toContain("**passed**");
    expect(section).toContain("from \\<module 'decoding'\\>");
    expect(section).toContain("`tests/test_dpo_preference_loss.py::test_matches_reference`");
    expect(md).toContain("## Problems reading the run");
    expect(md).toContain("results/example-model-1/orpo-odds-ratio-loss/1/result.json: invalid JSON");
  });

  it("keeps table rows intact when the data holds pipes, newlines and HTML", () => {
    const hostile = renderMarkdown(hostileSummary());
    const tables = tablesOf(hostile);
    // models, models by category, categories, tasks, non-passing samples
    expect(tables).toHaveLength(5);
    for (const table of tables) {
      const width = countCells(table[0] ?? "");
      for (const row of table) expect(countCells(row)).toBe(width);
    }
    const hostileRows = tables.flat().filter((l) => l.includes("alert") || l.includes("model</b>"));
    // the four rows as before, and the model's three rows of the models-by-category table (all, and each category)
    expect(hostileRows.length).toBe(7);
    // raw HTML is inert only inside code spans
    for (const row of hostileRows) expect(row.replace(/(`+).*?\1/g, "")).not.toMatch(/<script>|<img|<b>/);
    expect(hostile).toContain("# lmr run run \\<1\\>");
    expect(hostile).toContain('## Model `<b>model</b> \\| "x"`');
  });
});

describe("HTML", () => {
  const html = renderHtml(summary);

  it("is one self-contained page with no scripts and no external references", () => {
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html).not.toMatch(/<script|<link|<iframe|<img|@import|url\(/i);
    // links only within the page (the matrix's cells open their sample's panel)
    expect(html).not.toMatch(/\b(?:src|href|xlink:href|action)\s*=\s*"(?!#)/i);
    expect(html).toMatch(/href="#s-[0-9a-f]{16}"/);
    expect(html).not.toMatch(/https?:|\/\/[a-z]/i);
    expect(html).toContain("<style>");
    expect(html).toContain("@media (prefers-color-scheme: dark)");
  });

  it("shows headline numbers, a per-category SVG bar chart and verdict badges", () => {
    expect(html).toContain('<div class="num">27.8%</div>');
    const svg = html.slice(html.indexOf("<svg"), html.indexOf("</svg>") + 6);
    expect(svg).toContain('role="img"');
    expect(svg.match(/class="chart-bar"/g)).toHaveLength(2);
    // bar widths are proportional to pass rate: 1/3 and 1/4 of the 580-unit track
    expect(svg).toMatch(/class="chart-bar" x="0" y="\d+" width="193\.3"/);
    expect(svg).toMatch(/class="chart-bar" x="0" y="\d+" width="145"/);
    expect(svg).toContain("Decoding &amp; Search Strategies");
    expect(svg).toContain("33.3% · 1 task");
    for (const v of ["passed", "failed", "error", "timeout", "invalid", "infra"]) expect(html).toContain(`class="badge ${v}"`);
    expect(checkXml(svg).ok).toBe(true);
  });

  it("escapes every piece of run data", () => {
    const hostile = renderHtml(hostileSummary());
    expect(hostile).not.toContain("<img src=x");
    expect(hostile).not.toContain("<script>");
    expect(hostile).not.toMatch(/\u001b/);
    expect(hostile).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(hostile).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
    expect(hostile).toContain("<title>lmr run run &lt;1&gt;</title>");
    expect(hostile).not.toContain("<b>model");
    expect(hostile).toContain("&lt;b&gt;model&lt;/b&gt; | &quot;x&quot;");
    expect(hostile).not.toMatch(/<[^>]*\s(?:src|href)\s*=\s*"(?!#)/i);
  });
});

describe("JUnit XML", () => {
  it("checks well-formedness for real (the checker rejects broken XML)", () => {
    expect(checkXml("<a><b></a></b>").ok).toBe(false);
    expect(checkXml('<a x="1" x="2"/>').ok).toBe(false);
    expect(checkXml("<a>&nbsp;</a>").ok).toBe(false);
    expect(checkXml("<a>1 < 2</a>").ok).toBe(false);
    expect(checkXml("<a/><b/>").ok).toBe(false);
    expect(checkXml("<a>\u0001</a>").ok).toBe(false);
    expect(checkXml('<?xml version="1.0"?>\n<a t="&amp;&#10;"><b/>x &lt; y</a>\n')).toMatchObject({ ok: true, counts: { a: 1, b: 1 } });
  });

  it("has one testsuite per task and model, one testcase per sample and the right failure/error/skipped elements", () => {
    const xml = renderJunit(summary);
    const check = checkXml(xml);
    expect(check.error).toBeUndefined();
    expect(check.root).toBe("testsuites");
    // 7 readable samples + 1 unreadable result.json
    expect(check.counts).toMatchObject({ testsuites: 1, testsuite: 3, testcase: 8, failure: 1, error: 4, skipped: 1 });
    expect(xml).toMatch(/<testsuites name="lmr run 2025-01-15-fixture" tests="8" failures="1" errors="4" skipped="1"/);
    expect(xml).toMatch(/<testsuite name="dpo-preference-loss \(example-model-1\)" tests="3" failures="1" errors="0" skipped="1"/);
    expect(xml).toContain('<property name="model" value="example-model-1"/>');
    // the unreadable sample lands in its own task's suite
    expect(xml).toMatch(/<testsuite name="orpo-odds-ratio-loss \(example-model-1\)" tests="2" failures="0" errors="2"/);
    for (const type of ["error", "timeout", "invalid", "unreadable"]) expect(xml).toContain(`<error type="${type}"`);
    expect(xml).toContain('<skipped message="infra: sandbox could not start');
    expect(xml).toContain('<failure type="failed" message="1 of 4 grader tests failed: assert loss &lt; ref_loss + 1e-6 &amp; grads match">');
  });

  it("stays well-formed with hostile text and control characters", () => {
    const xml = renderJunit(hostileSummary());
    const check = checkXml(xml);
    expect(check.error).toBeUndefined();
    expect(check.counts.testcase).toBe(8);
    expect(xml).toContain('name="&lt;img src=x onerror=alert(1)&gt; (&lt;b&gt;model&lt;/b&gt; | &quot;x&quot;)"');
  });
});

describe("renderReport", () => {
  it("renders JSON as the summary itself and dispatches every format", () => {
    expect(JSON.parse(renderReport(summary, "json"))).toEqual(JSON.parse(JSON.stringify(summary)));
    expect(renderReport(summary, "md")).toBe(renderMarkdown(summary));
    expect(renderReport(summary, "html")).toBe(renderHtml(summary));
    expect(renderReport(summary, "junit")).toBe(renderJunit(summary));
  });
});

describe("a run with two models, in every format", () => {
  const betaDir = two.models[1]!.dir!;

  it("Markdown: a models table with each model's pass@k, then a section per model", () => {
    const md = renderMarkdown(two);
    expect(md).toContain("| `alpha` | 2 of 2 | 4 (4 graded) | 3 | 75.0% | @1 75.0%, @2 100.0% | 3 passed, 1 failed |");
    expect(md).toContain("| `Org/Beta-7B` | 2 of 2 | 3 (3 graded) | 1 | 50.0% |  | 1 passed, 1 failed, 1 timeout |");
    const alpha = md.slice(md.indexOf("## Model `alpha`"), md.indexOf("## Model `Org/Beta-7B`"));
    const beta = md.slice(md.indexOf("## Model `Org/Beta-7B`"), md.indexOf("## Problems"));
    expect(alpha).toContain("**pass@1: 75.0%** over 2 scored of 2 tasks; 4 samples (4 graded): 3 passed, 1 failed.");
    expect(alpha).toContain("pass@k: pass@1 75.0%, pass@2 100.0% (mean over 2 tasks).");
    expect(alpha).toMatch(/\| `dpo-preference-loss` \| core \| .* \| 2 \| 1 \| 50\.0% \| @1 50\.0%, @2 100\.0% \|/);
    expect(beta).toContain("**pass@1: 50.0%** over 2 scored of 2 tasks; 3 samples (3 graded)");
    expect(beta).not.toContain("pass@k: pass@1");
    expect(beta).toMatch(/\| `contrastive-decoding-step` \| extended \| .* \| 1 \| 1 \| 100\.0% \|/);
    // each model's own set table, since the run has tasks of both sets
    expect(alpha).toContain("| core | 1 | 2 | 1 | 50.0% | 1 passed, 1 failed |");
    expect(alpha).toContain("| extended | 1 | 2 | 2 | 100.0% | 2 passed |");
    expect(md).toContain(`- results/${betaDir}/contrastive-decoding-step: 1 of 2 samples of model 'Org/Beta-7B' have a readable result.json`);
    expect(md.match(/samples of model/g)).toHaveLength(1);
  });

  it("HTML: a models table and one section with its own cards per model", () => {
    const html = renderHtml(two);
    expect(html).toContain("<h2>Models</h2>");
    expect(html).toContain("<h2>Model <code>alpha</code></h2>");
    expect(html).toContain("<h2>Model <code>Org/Beta-7B</code></h2>");
    expect(html).toMatch(
      /<tr><td><code>alpha<\/code><\/td><td class="num">2 of 2<\/td><td class="num">4 \(4 graded\)<\/td><td class="num">3<\/td><td class="num">75\.0%<\/td><td>@1 75\.0%, @2 100\.0%<\/td>/,
    );
    expect(html.match(/<div class="card main"><div class="num">([^<]+)<\/div>/g)).toEqual([
      '<div class="card main"><div class="num">75.0%</div>',
      '<div class="card main"><div class="num">50.0%</div>',
    ]);
    expect(html.match(/<svg/g)).toHaveLength(2);
    expect(html).toContain("<h3>Pass rate by set</h3>");
  });

  it("JUnit: one testsuite per (task, model), counts per model", () => {
    const xml = renderJunit(two);
    const check = checkXml(xml);
    expect(check.error).toBeUndefined();
    expect(check.counts).toMatchObject({ testsuite: 4, testcase: 7, failure: 2, error: 1 });
    expect(xml).toMatch(/<testsuite name="dpo-preference-loss \(alpha\)" tests="2" failures="1" errors="0"/);
    expect(xml).toMatch(/<testsuite name="dpo-preference-loss \(Org\/Beta-7B\)" tests="2" failures="1" errors="1"/);
    expect(xml).toMatch(/<testsuite name="contrastive-decoding-step \(Org\/Beta-7B\)" tests="1" failures="0" errors="0"/);
    expect(xml).toContain('<property name="set" value="extended"/>');
    expect(xml).toContain('<testcase classname="dpo-preference-loss (Org/Beta-7B)" name="sample 1"');
  });

  it("JSON: the summary with one entry per model", () => {
    const json = JSON.parse(renderReport(two, "json")) as Summary;
    expect(json.models.map((m) => [m.model, m.pass_at_1, m.pass_at_k.length])).toEqual([
      ["alpha", 0.75, 2],
      ["Org/Beta-7B", 0.5, 1],
    ]);
    expect(json).not.toHaveProperty("pass_at_k");
  });

  it("places an unreadable result of either model in that model's suite", () => {
    const withBroken = structuredClone(two);
    withBroken.problems.push({ file: `results/${betaDir}/dpo-preference-loss/2/result.json`, message: "invalid JSON; the sample is left out" });
    const xml = renderJunit(withBroken);
    expect(xml).toMatch(/<testsuite name="dpo-preference-loss \(Org\/Beta-7B\)" tests="3" failures="1" errors="2"/);
  });
});
