import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashSubmission, loadSubmissions } from "./submissions.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "lmr-subs-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function jsonl(name: string, lines: string[]): Promise<string> {
  const f = join(dir, name);
  await writeFile(f, lines.join("\n") + "\n");
  return f;
}

describe("loadSubmissions (JSONL)", () => {
  it("reads lmr and SWE-bench key names, numbers samples per task and model in order", async () => {
    const f = await jsonl("a.jsonl", [
      JSON.stringify({ instance_id: "t1", model_name_or_path: "m", model_patch: "P1" }),
      JSON.stringify({ task_id: "t1", model: "other", patch: "P2" }),
      JSON.stringify({ task_id: "t1", model: "m", patch: "P3" }),
      "",
      JSON.stringify({ task_id: "t2", files: { "a.py": "x" } }),
    ]);
    const { submissions, problems } = await loadSubmissions(f);
    expect(problems).toEqual([]);
    expect(submissions.map((s) => [s.task_id, s.model, s.sample, s.content.kind, s.origin.split(":").pop()])).toEqual([
      ["t1", "m", "0", "patch", "1"],
      ["t1", "other", "0", "patch", "2"],
      ["t1", "m", "1", "patch", "3"],
      ["t2", "unknown", "0", "files", "5"],
    ]);
  });

  it('reads a row that says it gives no code ("invalid": reason) as such, whatever else it holds', async () => {
    const f = await jsonl("inv.jsonl", [JSON.stringify({ task_id: "t1", model: "m", sample: 0, patch: "", invalid: "the reply holds no code" })]);
    const { submissions, problems } = await loadSubmissions(f);
    expect(problems).toEqual([]);
    expect(submissions[0]!.content).toEqual({ kind: "invalid", reason: "the reply holds no code" });
  });

  it("reports every bad row with its line; a key given twice names both lines", async () => {
    const f = await jsonl("b.jsonl", [
      "{not json",
      JSON.stringify([1]),
      JSON.stringify({ model: "m", patch: "p" }),
      JSON.stringify({ task_id: "t", files: { "a.py": 3 } }),
      JSON.stringify({ task_id: "t", sample: "../../etc", patch: "p" }),
      JSON.stringify({ task_id: "t", model: "m", sample: "a", patch: "p" }),
      JSON.stringify({ task_id: "t", model: "m", sample: "a", patch: "q" }),
      JSON.stringify({ task_id: "t", model: "n", sample: "a", patch: "q" }),
      JSON.stringify({ task_id: "t", model: 7, patch: "q" }),
    ]);
    const { submissions, problems } = await loadSubmissions(f);
    expect(submissions.map((s) => `${s.model}/${s.sample}`)).toEqual(["m/a", "n/a"]);
    expect(problems.map((p) => `${p.file!.split(":").pop()} ${p.pointer ?? ""}`)).toEqual([
      "1 ",
      "2 ",
      "3 /task_id",
      "4 /patch",
      "5 /sample",
      "7 /sample",
      "9 /model",
    ]);
    expect(problems[5]!.message).toBe("task 't', model 'm', sample 'a' is given twice: on line 6 and on line 7");
  });

  it("stops on a path that does not exist", async () => {
    await expect(loadSubmissions(join(dir, "nope.jsonl"))).rejects.toThrow(/submissions path does not exist/);
  });
});

describe("loadSubmissions (folder of workspaces)", () => {
  it("takes DIR/<task>/ as sample 0 and DIR/<task>/<n>/ as samples, ignoring hidden entries", async () => {
    const root = join(dir, "ws");
    await mkdir(join(root, "single", "pkg"), { recursive: true });
    await mkdir(join(root, "multi", "0"), { recursive: true });
    await mkdir(join(root, "multi", "10"), { recursive: true });
    await mkdir(join(root, "multi", "2"), { recursive: true });
    await mkdir(join(root, "multi", ".git"), { recursive: true });
    await mkdir(join(root, ".cache"), { recursive: true });
    await writeFile(join(root, "model.txt"), "my-model\n");
    const { submissions } = await loadSubmissions(root);
    expect(submissions.map((s) => [s.task_id, s.sample, s.model])).toEqual([
      ["multi", "0", "my-model"],
      ["multi", "2", "my-model"],
      ["multi", "10", "my-model"],
      ["single", "0", "my-model"],
    ]);
  });
});

describe("hashSubmission", () => {
  it("depends on the target files only, and hashes a symlink as a link", async () => {
    const a = join(dir, "ha");
    await mkdir(a, { recursive: true });
    await writeFile(join(a, "t.py"), "x = 1\n");
    await writeFile(join(a, "other.py"), "y\n");
    const sub = { task_id: "t", sample: "0", model: "m", content: { kind: "tree" as const, dir: a }, origin: a };
    const h1 = await hashSubmission(sub, ["t.py"]);
    await writeFile(join(a, "other.py"), "changed\n");
    expect(await hashSubmission(sub, ["t.py"])).toBe(h1);
    await rm(join(a, "t.py"));
    await writeFile(join(dir, "elsewhere.py"), "x = 1\n");
    await symlink(join(dir, "elsewhere.py"), join(a, "t.py"));
    expect(await hashSubmission(sub, ["t.py"])).not.toBe(h1);
    const files = (content: string) => ({
      task_id: "t",
      sample: "0",
      model: "m",
      content: { kind: "files" as const, files: { "t.py": content } },
      origin: "f:1",
    });
    expect(await hashSubmission(files("a"), ["t.py"])).not.toBe(await hashSubmission(files("b"), ["t.py"]));
  });
});
