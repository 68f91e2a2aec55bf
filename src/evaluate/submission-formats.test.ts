import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applySubmission } from "./apply-submission.js";
import { hashSubmission, loadSubmissions, mapLmrBenchFolder } from "./submissions.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "lmr-formats-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const known = ["dpo-preference-loss", "dpo-grad", "knowprob-entity-overlap", "knowprob-remove-object-subject-overlap", "pref-loss"];

describe("OpenHands output.jsonl", () => {
  it("takes test_result.git_patch as the patch and metadata.llm_config.model as the model", async () => {
    const f = join(dir, "output.jsonl");
    await writeFile(
      f,
      [
        JSON.stringify({
          instance_id: "pref-loss",
          instruction: "…",
          test_result: { git_patch: "diff --git a/x b/x\n" },
          metadata: { llm_config: { model: "claude-x" } },
          history: [],
        }),
        JSON.stringify({
          instance_id: "dpo-grad",
          test_result: { git_patch: "" },
          error: "Agent got stuck in a loop",
          metadata: { llm_config: { model: "claude-x" } },
        }),
        JSON.stringify({ instance_id: "pref-loss", test_result: {}, error: "RuntimeError: sandbox died", metadata: { model_name: "claude-x" } }),
        JSON.stringify({ instance_id: "1-DPO", test_result: { git_patch: "P" }, metadata: { llm_config: { model: "claude-x" } } }),
      ].join("\n") + "\n",
    );
    const { submissions, problems } = await loadSubmissions(f, { knownTaskIds: known });
    expect(problems).toEqual([]);
    expect(submissions.map((s) => [s.task_id, s.model, s.sample, s.content])).toEqual([
      ["pref-loss", "claude-x", "0", { kind: "patch", patch: "diff --git a/x b/x\n" }],
      ["dpo-grad", "claude-x", "0", { kind: "invalid", reason: "OpenHands reported an error and an empty git_patch: Agent got stuck in a loop" }],
      ["pref-loss", "claude-x", "1", { kind: "invalid", reason: "OpenHands reported an error and no patch: RuntimeError: sandbox died" }],
      // an LMR-Bench folder name as instance id: the patch for each task lmr import makes of that folder
      ["dpo-grad", "claude-x", "1", { kind: "patch", patch: "P" }],
      ["dpo-preference-loss", "claude-x", "0", { kind: "patch", patch: "P" }],
    ]);
  });

  it("a row with test_result but no git_patch (and no error) is a problem naming the field", async () => {
    const f = join(dir, "bad.jsonl");
    await writeFile(f, JSON.stringify({ instance_id: "pref-loss", test_result: { report: {} } }) + "\n");
    const { submissions, problems } = await loadSubmissions(f, { knownTaskIds: known });
    expect(submissions).toEqual([]);
    expect(problems).toEqual([
      expect.objectContaining({
        file: `${f}:1`,
        pointer: "/test_result/git_patch",
        message: expect.stringContaining("without a string test_result.git_patch"),
      }),
    ]);
  });
});

describe("LMR-Bench's layout (a folder per paper holding the filled repository)", () => {
  it("maps a folder to the task its info.json names, or to every task lmr import makes of it", () => {
    expect(mapLmrBenchFolder("1-DPO", new Set(known))).toEqual(["dpo-grad", "dpo-preference-loss"]);
    expect(mapLmrBenchFolder("12-KnowProb", new Set(known))).toEqual(["knowprob-entity-overlap", "knowprob-remove-object-subject-overlap"]);
    expect(mapLmrBenchFolder("3-Nothing", new Set(known))).toEqual([]);
  });

  it("reads each paper folder's repository as a tree submission; workspaces named by task id still work", async () => {
    const root = join(dir, "lmrbench");
    await mkdir(join(root, "12-KnowProb", "knowprob-repo"), { recursive: true });
    await writeFile(join(root, "12-KnowProb", "info.json"), JSON.stringify({ folder_name: "12-KnowProb", repo_folder_name: "knowprob-repo" }));
    await mkdir(join(root, "4-Pref", "repo"), { recursive: true });
    await mkdir(join(root, "4-Pref", "golden_files"), { recursive: true });
    await writeFile(join(root, "4-Pref", "info.json"), JSON.stringify({ lmr: { task_id: "pref-loss" } }));
    await mkdir(join(root, "dpo-grad"), { recursive: true });
    await writeFile(join(root, "model.txt"), "lmrbench-agent\n");
    const { submissions, problems } = await loadSubmissions(root, { knownTaskIds: known });
    expect(problems).toEqual([]);
    expect(submissions.map((s) => [s.task_id, s.model, s.sample, s.content])).toEqual([
      ["knowprob-entity-overlap", "lmrbench-agent", "0", { kind: "tree", dir: join(root, "12-KnowProb", "knowprob-repo") }],
      ["knowprob-remove-object-subject-overlap", "lmrbench-agent", "0", { kind: "tree", dir: join(root, "12-KnowProb", "knowprob-repo") }],
      ["pref-loss", "lmrbench-agent", "0", { kind: "tree", dir: join(root, "4-Pref", "repo") }],
      ["dpo-grad", "lmrbench-agent", "0", { kind: "tree", dir: join(root, "dpo-grad") }],
    ]);
  });

  it("a folder that stands for no task, a missing repository or a broken info.json is a problem naming the file and the fix", async () => {
    const root = join(dir, "lmrbench-bad");
    await mkdir(join(root, "3-Nothing", "repo"), { recursive: true });
    await writeFile(join(root, "3-Nothing", "info.json"), "{}");
    await mkdir(join(root, "5-Pref"), { recursive: true });
    await writeFile(join(root, "5-Pref", "info.json"), JSON.stringify({ repo_folder_name: "gone" }));
    await mkdir(join(root, "6-Pref", "a"), { recursive: true });
    await mkdir(join(root, "6-Pref", "b"), { recursive: true });
    await writeFile(join(root, "6-Pref", "info.json"), "{");
    const { submissions, problems } = await loadSubmissions(root, { knownTaskIds: known });
    expect(submissions).toEqual([]);
    expect(problems).toEqual([
      expect.objectContaining({
        file: join(root, "3-Nothing"),
        message: expect.stringContaining("'3-Nothing' stands for no task here (tasks made of it by lmr import have ids 'nothing' or 'nothing-…')"),
        hint: expect.stringContaining('"lmr": {"task_id"'),
      }),
      expect.objectContaining({
        file: join(root, "5-Pref", "info.json"),
        pointer: "/repo_folder_name",
        message: expect.stringContaining("'gone' is not a folder"),
      }),
      expect.objectContaining({ file: join(root, "6-Pref", "info.json"), message: expect.stringContaining("info.json that cannot be read") }),
    ]);
  });
});

describe("rows that say why there is no code", () => {
  it("reads timeout and infra rows as stopped samples with their reason; each hashes apart", async () => {
    const f = join(dir, "stopped.jsonl");
    await writeFile(
      f,
      [
        JSON.stringify({ task_id: "pref-loss", model: "a", timeout: "the agent ran past 3 s" }),
        JSON.stringify({ task_id: "pref-loss", model: "a", infra: "no sandbox" }),
        JSON.stringify({ task_id: "pref-loss", model: "a", invalid: "the agent ran past 3 s" }),
      ].join("\n") + "\n",
    );
    const { submissions, problems } = await loadSubmissions(f, { knownTaskIds: known });
    expect(problems).toEqual([]);
    expect(submissions.map((s) => s.content)).toEqual([
      { kind: "stopped", verdict: "timeout", reason: "the agent ran past 3 s" },
      { kind: "stopped", verdict: "infra", reason: "no sandbox" },
      { kind: "invalid", reason: "the agent ran past 3 s" },
    ]);
    const hashes = await Promise.all(submissions.map((s) => hashSubmission(s, ["trainers.py"])));
    expect(new Set(hashes).size).toBe(3);
    expect(await applySubmission(submissions[0]!, dir, ["trainers.py"], "lmr_tests")).toEqual({ ok: false, reason: "the agent ran past 3 s" });
  });
});
