import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { validateSummary } from "../../src/report/validate-summary.js";
import { BASIC_RESULTS, LEGACY_RUN, TWO_MODEL_RUN, copyFixtureRun, runCli } from "./helpers.js";
import { checkXml } from "./xml-check.js";
import { jsonData, jsonEnvelope } from "../helpers/run-cli.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});
async function freshRun(src?: string): Promise<string> {
  const { dir, cleanup } = await copyFixtureRun(src);
  cleanups.push(cleanup);
  return dir;
}

describe("lmr report (built CLI)", () => {
  it("prints Markdown by default, warns about the corrupt result and rewrites summary.json", async () => {
    const dir = await freshRun();
    await writeFile(join(dir, "summary.json"), "stale");
    const r = await runCli(["report", dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^# lmr run 2025-01-15-fixture\n/);
    expect(r.stdout).toContain("**pass@1: 27.8%**");
    expect(r.stderr).toContain(`lmr: warning: ${join(dir, BASIC_RESULTS, "orpo-odds-ratio-loss/1/result.json")}: invalid JSON`);
    const summary = JSON.parse(await readFile(join(dir, "summary.json"), "utf8")) as unknown;
    expect(await validateSummary(summary)).toEqual({ ok: true, problems: [] });
    expect(summary).toMatchObject({ schema_version: 2, totals: { models: 1, samples: 7, passed: 2 } });
  });

  it("re-grades from disk: a changed result.json changes the next report", async () => {
    const dir = await freshRun();
    const file = join(dir, BASIC_RESULTS, "orpo-odds-ratio-loss/0/result.json");
    const before = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
    await writeFile(file, JSON.stringify({ ...before, verdict: "passed", reason: undefined }));
    const r = await runCli(["report", dir, "--format", "json"]);
    expect(r.code, r.stderr).toBe(0);
    const s = jsonData(r.stdout) as { models: { pass_at_1: number }[]; totals: { passed: number } };
    expect(s.totals.passed).toBe(3);
    expect(s.models[0]!.pass_at_1).toBeCloseTo((1 / 2 + 1 / 3 + 1) / 3, 12);
    expect(JSON.parse(await readFile(join(dir, "summary.json"), "utf8"))).toEqual(s);
  });

  it("writes a self-contained HTML page with --out", async () => {
    const dir = await freshRun();
    const out = join(dir, "..", "report.html");
    const r = await runCli(["report", dir, "--format", "html", "--out", out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`lmr: wrote html report to ${out}`);
    const html = await readFile(out, "utf8");
    expect(html).toContain("<svg");
    expect(html).not.toMatch(/\b(?:src|href)\s*=\s*"(?!#)|https?:/i);
  });

  it("writes JUnit XML that a real XML parser reads with matching counts", async () => {
    const dir = await freshRun();
    const r = await runCli(["report", dir, "--format", "junit"]);
    expect(r.code, r.stderr).toBe(0);
    expect(checkXml(r.stdout)).toMatchObject({ ok: true, counts: { testsuite: 3, testcase: 8, failure: 1, error: 4, skipped: 1 } });
    const python = process.env.LMR_PYTHON ?? "python3";
    const parsed = await execa(
      python,
      [
        "-c",
        [
          "import sys, json, xml.etree.ElementTree as ET",
          "root = ET.fromstring(sys.stdin.buffer.read())",
          "print(json.dumps({'root': root.tag, 'suites': len(root.findall('testsuite')), 'cases': len(list(root.iter('testcase'))),",
          "  'failure': len(list(root.iter('failure'))), 'error': len(list(root.iter('error'))), 'skipped': len(list(root.iter('skipped'))),",
          "  'tests_attr': int(root.get('tests')), 'errors_attr': int(root.get('errors'))}))",
        ].join("\n"),
      ],
      { input: r.stdout },
    );
    expect(JSON.parse(parsed.stdout)).toEqual({ root: "testsuites", suites: 3, cases: 8, failure: 1, error: 4, skipped: 1, tests_attr: 8, errors_attr: 4 });
  });

  it("accepts --json as --format json", async () => {
    const dir = await freshRun();
    const r = await runCli(["report", dir, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(jsonData(r.stdout)).toMatchObject({ schema_version: 2, run: { run_id: "2025-01-15-fixture" } });
  });

  it("exits 2 naming the missing file when RUN_DIR is not a run folder", async () => {
    const dir = await freshRun();
    await rm(join(dir, "run.json"));
    const r = await runCli(["report", dir]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`lmr: ${join(dir, "run.json")}: not a run folder: run.json is missing`);
    const j = await runCli(["report", join(dir, "nope"), "--json"]);
    expect(j.code, j.stderr).toBe(2);
    expect(jsonEnvelope(j.stdout)).toMatchObject({ ok: false, command: "report", error: { code: "report/not-a-run", kind: "input" } });
  });

  it("reports a run folder an older lmr wrote (results/<task>/<sample>/)", async () => {
    const dir = await freshRun(LEGACY_RUN);
    const r = await runCli(["report", dir, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(jsonData(r.stdout)).toMatchObject({
      totals: { models: 1, samples: 7, passed: 2 },
      models: [{ model: "example-model-1", pass_at_1: expect.closeTo(5 / 18, 12) }],
    });
    expect(r.stderr).toContain(`lmr: warning: ${join(dir, "results/orpo-odds-ratio-loss/1/result.json")}: invalid JSON`);
  });

  it("reports each model of a two-model run apart in every format, and --set narrows to one set", async () => {
    const dir = await freshRun(TWO_MODEL_RUN);
    const md = await runCli(["report", dir]);
    expect(md.code, md.stderr).toBe(0);
    expect(md.stdout).toContain("## Model `alpha`");
    expect(md.stdout).toContain("## Model `Org/Beta-7B`");
    expect(md.stderr.match(/lmr: warning:/g)).toHaveLength(1);
    expect(md.stderr).toContain("1 of 2 samples of model 'Org/Beta-7B' have a readable result.json");
    const html = await runCli(["report", dir, "--format", "html"]);
    expect(html.stdout.match(/<h2>Model <code>/g)).toHaveLength(2);
    const junit = await runCli(["report", dir, "--format", "junit"]);
    expect(checkXml(junit.stdout)).toMatchObject({ ok: true, counts: { testsuite: 4, testcase: 7 } });
    const json = jsonData((await runCli(["report", dir, "--json"])).stdout) as { models: { model: string; pass_at_1: number }[] };
    expect(json.models.map((m) => [m.model, m.pass_at_1])).toEqual([
      ["alpha", 0.75],
      ["Org/Beta-7B", 0.5],
    ]);

    const core = await runCli(["report", dir, "--set", "core", "--format", "json"]);
    expect(core.code, core.stderr).toBe(0);
    const s = jsonData(core.stdout) as { set_filter: string; models: { tasks: { task_id: string }[] }[] };
    expect(s.set_filter).toBe("core");
    expect(s.models.map((m) => m.tasks.map((t) => t.task_id))).toEqual([["dpo-preference-loss"], ["dpo-preference-loss"]]);
    expect(core.stderr).toBe("");
    // summary.json still covers the whole run
    const onDisk = JSON.parse(await readFile(join(dir, "summary.json"), "utf8")) as { set_filter?: string; totals: { tasks: number } };
    expect(onDisk.set_filter).toBeUndefined();
    expect(onDisk.totals.tasks).toBe(2);
    const bad = await runCli(["report", dir, "--set", "bonus"]);
    expect(bad.code).toBe(2);
  });

  it("exits 2 on bad usage and documents itself", async () => {
    const dir = await freshRun();
    const bad = await runCli(["report", dir, "--format", "pdf"]);
    expect(bad.code, bad.stderr).toBe(2);
    expect(bad.stderr).toMatch(/argument 'pdf' is invalid/);
    expect((await runCli(["report"])).code).toBe(2);
    const help = await runCli(["report", "--help"]);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain("$ lmr report runs/2024-06-01-gpt --format html --out report.html");
  });
});
