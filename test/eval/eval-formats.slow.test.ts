import { cp, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli } from "../helpers/run-cli.js";
import { buildExampleBundles, readResults, referencePatch, targetFiles, writeJsonl } from "./helpers.js";

/** lmr eval on the two foreign submission formats, graded for real on the example tasks. */
const TASKS = ["pref-loss", "dpo-grad-region"];
const evalArgs = (subs: string, out: string): string[] => [
  "eval",
  "--tasks-dir",
  "examples/tasks",
  "--tasks",
  ...TASKS,
  "--submissions",
  subs,
  "--out",
  out,
  "--sandbox",
  "bwrap",
  "--python",
  "/usr/bin/python3",
  "-j",
  "2",
];

describe("lmr eval: OpenHands output.jsonl and LMR-Bench's layout", () => {
  let bundles: string;
  let root: string;
  beforeAll(async () => {
    bundles = await buildExampleBundles();
    root = await makeTempDir("eval-formats");
  }, 180_000);
  afterAll(removeTempDirs);

  it("grades OpenHands rows: git_patch passes, an error row is invalid with its error, the model comes from metadata", async () => {
    const f = join(root, "output.jsonl");
    await writeJsonl(f, [
      {
        instance_id: "pref-loss",
        instruction: "…",
        history: [],
        metadata: { llm_config: { model: "oh-claude" } },
        test_result: { git_patch: await referencePatch(bundles, "pref-loss") },
      },
      {
        instance_id: "dpo-grad-region",
        metadata: { llm_config: { model: "oh-claude" } },
        test_result: { git_patch: "" },
        error: "Agent reached maximum iteration",
      },
    ]);
    const out = join(root, "oh-run");
    const r = await runCli(evalArgs(f, out));
    expect(r.exitCode, r.stderr).toBe(0);
    const results = await readResults(out, "oh-claude");
    expect(results.get("pref-loss/0")?.verdict).toBe("passed");
    expect(results.get("dpo-grad-region/0")).toMatchObject({ verdict: "invalid", reason: expect.stringContaining("Agent reached maximum iteration") });
  });

  it("an OpenHands row without git_patch stops the run before anything is written, naming the line and field", async () => {
    const f = join(root, "bad-output.jsonl");
    await writeJsonl(f, [{ instance_id: "pref-loss", test_result: { resolved: false } }]);
    const out = join(root, "oh-bad");
    const r = await runCli(evalArgs(f, out));
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`${f}:1: /test_result/git_patch: an OpenHands row`);
    await expect(readFile(join(out, "run.json"))).rejects.toThrow();
  });

  it("grades an LMR-Bench tree: a folder per paper holding the filled repository", async () => {
    const tree = join(root, "lmrbench");
    // 4-Pref: mapped by name (lmr import would call its task pref-…); filled with the reference
    const pref = join(tree, "4-Pref", "pref-trainer");
    await cp(join(bundles, "pref-loss", "workspace"), pref, { recursive: true });
    for (const file of await targetFiles(bundles, "pref-loss")) await cp(join(bundles, "pref-loss", "reference", file), join(pref, file));
    await writeFile(join(tree, "4-Pref", "info.json"), JSON.stringify({ folder_name: "4-Pref", repo_folder_name: "pref-trainer" }));
    // 9-Region: named by info.json's lmr.task_id; left masked
    await mkdir(join(tree, "9-Region"), { recursive: true });
    await cp(join(bundles, "dpo-grad-region", "workspace"), join(tree, "9-Region", "repo"), { recursive: true });
    await writeFile(join(tree, "9-Region", "info.json"), JSON.stringify({ repo_folder_name: "repo", lmr: { task_id: "dpo-grad-region" } }));
    await writeFile(join(tree, "model.txt"), "lmrbench-agent\n");
    const out = join(root, "lb-run");
    const r = await runCli(evalArgs(tree, out));
    expect(r.exitCode, r.stderr).toBe(0);
    const results = await readResults(out, "lmrbench-agent");
    expect(results.get("pref-loss/0")?.verdict).toBe("passed");
    expect(results.get("dpo-grad-region/0")?.verdict).toBe("failed");
  });

  it("an LMR-Bench folder that stands for no task is bad input with the fix", async () => {
    const tree = join(root, "lmrbench-bad");
    await mkdir(join(tree, "7-Unknown", "repo"), { recursive: true });
    await writeFile(join(tree, "7-Unknown", "info.json"), "{}");
    const r = await runCli(evalArgs(tree, join(root, "lb-bad")));
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("the LMR-Bench folder '7-Unknown' stands for no task here");
    expect(r.stderr).toContain('"lmr": {"task_id"');
  });
});
