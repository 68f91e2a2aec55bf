import { execa } from "execa";
import { cp, readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JsonlRow } from "../../src/interop/export/jsonl.js";
import type { TaskManifest } from "../../src/manifest/types.js";
import { UPSTREAMS, makeGitRepo, makeTempDir, pythonBin, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli, jsonData } from "../helpers/run-cli.js";
import { copyTask } from "../helpers/task-copy.js";

afterAll(removeTempDirs);

/** Example tasks covering mask modes body and class and an extract-function prepare step. */
const TASKS = ["pref-loss", "trainer-class", "mcts-best-action"];

async function readJson<T>(path: string): Promise<T> {
  return JSON.parse(await readFile(path, "utf8")) as T;
}

async function pytest(cwd: string, target: string): Promise<{ exitCode: number; output: string }> {
  const r = await execa(pythonBin(), ["-m", "pytest", "-q", "-p", "no:cacheprovider", target], {
    cwd,
    env: { PYTHONPATH: cwd, PYTHONDONTWRITEBYTECODE: "1" },
    reject: false,
    all: true,
  });
  return { exitCode: r.exitCode ?? -1, output: String(r.all) };
}

describe("lmr export → lmr import round trip over git upstreams", () => {
  let root: string;
  let env: Record<string, string>;
  let manifests: Map<string, TaskManifest>;
  let exported: string;

  beforeAll(async () => {
    root = await makeTempDir("roundtrip");
    env = { LMR_CACHE: join(root, "cache") };
    // the repository folder in LMR-Bench's layout is named after the URL's last segment
    const named = async (name: string) => {
      const repo = await makeGitRepo(join(UPSTREAMS, name));
      const dir = join(root, "git", name);
      await cp(repo.dir, dir, { recursive: true });
      return { dir, commit: repo.commit };
    };
    const repos = { "pref-trainer": await named("pref-trainer"), "mcts-search": await named("mcts-search") };
    manifests = new Map();
    for (const id of TASKS) {
      const dir = await copyTask(root, id, (m) => {
        const repo = repos[String(m.upstream.path).split("/").pop() as keyof typeof repos];
        m.upstream = { repo: pathToFileURL(repo.dir).href, commit: repo.commit, license: "MIT" };
      });
      manifests.set(id, await readJson<TaskManifest>(join(dir, "task.json")));
    }
    exported = join(root, "export");
    const r = await runCli(["export", "--format", "lmr-bench", "--out", exported, "--tasks-dir", join(root, "tasks"), "--json"], { env });
    expect(r.stderr).toBe("");
    expect(r.exitCode).toBe(0);
  });

  it("writes LMR-Bench's layout: <n>-<id>/ with the repository, golden files, info.json and a Dockerfile", async () => {
    // findTaskDirs lists tasks in name order
    expect((await readdir(exported)).sort()).toEqual(["1-mcts-best-action", "2-pref-loss", "3-trainer-class"]);
    const folder = join(exported, "2-pref-loss");
    expect((await readdir(folder)).sort()).toEqual(["Dockerfile", "golden_files", "info.json", "pref-trainer"]);
    const info = await readJson<Record<string, any>>(join(folder, "info.json"));
    expect(info).toMatchObject({
      instance_id: 2,
      paper_name: manifests.get("pref-loss")!.paper.title,
      repo_folder_name: "pref-trainer",
      implementations: [
        {
          goal_file: "trainers.py",
          goal_function: "preference_loss",
          class_name: "",
          golden_file: "golden_files/trainers_golden.py",
          unit_test_file: "unit_test/tests/test_preference_loss.py",
          retrieval_context: ["utils.py", "models.py", "train.py"],
        },
      ],
    });
    expect(info.implementations[0].instruction).toBe(await readFile(join(root, "tasks", "pref-loss", "instruction.md"), "utf8"));
    // the bridge travels with the tests (not the harness), and a conftest starts the candidate
    const tests = join(folder, "pref-trainer", "unit_test");
    expect((await readdir(join(tests, "_lmr"))).sort()).toEqual(["lmr_bridge", "lmr_record"]);
    expect(await readFile(join(tests, "conftest.py"), "utf8")).toContain("by_hand.start(");
    const docker = await readFile(join(folder, "Dockerfile"), "utf8");
    expect(docker).toContain("FROM python:3.11-slim\n");
    expect(docker).toContain('COPY ["pref-trainer/","/workspace/pref-trainer/"]');
    expect(docker).toContain('CMD ["python","-m","pytest","-q","-p","no:cacheprovider","unit_test"]');
    const trainerClass = await readJson<Record<string, any>>(join(exported, "3-trainer-class", "info.json"));
    expect(trainerClass.implementations[0]).toMatchObject({ goal_function: "", class_name: "Trainer" });
  });

  it("runs unchanged in that layout: grader tests fail on the masked repository and pass with the golden file", async () => {
    for (const [folder, repo, file] of [
      ["2-pref-loss", "pref-trainer", "trainers.py"],
      ["1-mcts-best-action", "mcts-search", "core/mcts.py"],
    ] as const) {
      const work = join(await makeTempDir("lmrbench-run"), repo);
      await cp(join(exported, folder, repo), work, { recursive: true });
      const masked = await pytest(work, "unit_test");
      expect(masked.exitCode, masked.output).toBe(1);
      expect(masked.output).toContain("NotImplementedError");
      const golden = (await readdir(join(exported, folder, "golden_files")))[0]!;
      await cp(join(exported, folder, "golden_files", golden), join(work, file));
      const ref = await pytest(work, "unit_test");
      expect(ref.exitCode, ref.output).toBe(0);
    }
  });

  it("imports back with the same id, paper, category, targets, upstream, context and prepare steps", async () => {
    const back = join(root, "reimported");
    const r = await runCli(["import", "lmr-bench", exported, "--out", back, "--json"], { env });
    const body = jsonData(r.stdout) as { tasks: string[]; defects: unknown[] };
    expect(body.defects).toEqual([]);
    expect(r.exitCode).toBe(0);
    expect(body.tasks.sort()).toEqual([...TASKS].sort());
    for (const id of TASKS) {
      const a = manifests.get(id)!;
      const b = await readJson<TaskManifest>(join(back, id, "task.json"));
      expect({
        id: b.id,
        paper: b.paper,
        category: b.category,
        targets: b.targets,
        upstream: b.upstream,
        context: b.context_files,
        prepare: b.prepare,
        env: b.environment,
      }).toEqual({
        id: a.id,
        paper: { title: a.paper.title, url: a.paper.url, year: a.paper.year, venue: a.paper.venue },
        category: a.category,
        targets: a.targets,
        upstream: a.upstream,
        context: a.context_files,
        prepare: a.prepare,
        env: a.environment,
      });
    }
    const validate = await runCli(["validate", "--tasks-dir", back]);
    expect(validate.exitCode).toBe(0);
  });

  it("exports JSONL rows with masked code only for redistributable licences", async () => {
    const copy = await copyTask(root, "rouge-notebook", (m) => {
      m.upstream.license = "NOASSERTION";
    });
    const file = join(root, "tasks.jsonl");
    const r = await runCli(["export", "--format", "jsonl", "--out", file, join(root, "tasks", "pref-loss"), copy], { env });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain('warning: rouge-notebook: upstream licence NOASSERTION does not allow redistribution; row written with "code": null');
    const rows = (await readFile(file, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as JsonlRow);
    expect(rows.map((row) => [row.id, row.redistributable])).toEqual([
      ["pref-loss", true],
      ["rouge-notebook", false],
    ]);
    const [pref, rouge] = rows as [JsonlRow, JsonlRow];
    expect(Object.keys(pref)).toEqual(["id", "paper", "category", "upstream", "targets", "instruction", "environment", "hashes", "redistributable", "code"]);
    expect(pref.upstream).toEqual(manifests.get("pref-loss")!.upstream);
    expect(pref.code!["trainers.py"]).toContain("raise NotImplementedError");
    expect(pref.code!["trainers.py"]).not.toContain("reference_margin");
    expect(pref.hashes.workspace).toMatch(/^[0-9a-f]{64}$/);
    expect(rouge.code).toBeNull();
    expect(rouge.upstream).toEqual({ repo: null, commit: null, license: "NOASSERTION" });
  });
});
