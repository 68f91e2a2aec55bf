import { cp, readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateSummary, type Summary } from "../../src/report/index.js";
import type { QueueStatus } from "../../src/queue/queue-status.js";
import { makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { explainNoRedis, startRedis, type RedisHandle } from "../helpers/redis-server.js";
import { runCli, jsonData } from "../helpers/run-cli.js";
import { TASK_IDS, buildExampleBundles, evalExamples, readResults, referencePatch, stubPatch, verdicts, writeJsonl } from "../eval/helpers.js";
import { spawnCli, spawnWorker, stopGracefully } from "./helpers.js";

/**
 * `lmr eval --queue` with two `lmr worker` processes over the example tasks,
 * against a real redis-server started here. The kill -9 / restart scenarios
 * are in queue-faults.queue.ts (a separate suite: they wait out locks).
 */
const noRedis = explainNoRedis();
if (noRedis) console.warn(noRedis);

afterAll(removeTempDirs);

describe.skipIf(noRedis !== undefined)("lmr eval --queue with two workers", () => {
  let redis: RedisHandle;
  let work: string;
  let bundles: string;
  beforeAll(async () => {
    redis = await startRedis({ password: "s3cret-pw" });
    work = await makeTempDir("queue");
    bundles = await buildExampleBundles();
  });
  afterAll(async () => redis?.stop());

  it("grades every sample once, with the verdicts of the submissions, into the folder a local run writes", async () => {
    const rows: unknown[] = [];
    for (const t of TASK_IDS)
      rows.push({ task_id: t, model: "m", patch: await referencePatch(bundles, t) }, { task_id: t, model: "m", patch: await stubPatch(bundles, t, work) });
    const jsonl = join(work, "subs.jsonl");
    await writeJsonl(jsonl, rows);
    const url = redis.url;
    const wb = join(work, "worker-bundles");
    const workers = [spawnWorker(url, wb), spawnWorker(url, wb)];
    const runDir = join(work, "run");
    const r = await evalExamples(jsonl, runDir, "--sandbox", "none", "--queue", url, "--json");
    expect(r.exitCode, r.stderr).toBe(0);
    expect(await Promise.all(workers.map(stopGracefully))).toEqual([0, 0]);
    for (const w of workers) expect(w.output()).toMatch(/stopped, graded \d+ sample/);

    const out = jsonData(r.stdout) as { summary: Summary; queue: QueueStatus };
    expect((await validateSummary(out.summary)).problems).toEqual([]);
    expect(out.summary.totals).toMatchObject({ samples: 10, graded: 10, passed: 5 });
    expect(out.queue.recorded).toBe(10);
    expect(out.queue.redis).not.toContain("s3cret");
    const shares = out.queue.workers.map((w) => w.done);
    expect(shares.reduce((a, b) => a + b, 0)).toBe(10);
    expect(shares.filter((n) => n > 0).length).toBe(2);

    const results = await readResults(runDir, "m");
    expect(verdicts(results)).toEqual(
      Object.fromEntries(
        TASK_IDS.flatMap((t) => [
          [`${t}/0`, "passed"],
          [`${t}/1`, "failed"],
        ]).sort(),
      ),
    );
    for (const t of TASK_IDS) {
      for (const s of ["0", "1"])
        expect((await readdir(join(runDir, "results", "m", t, s))).sort()).toEqual(["junit.xml", "log.txt", "result.json", "submission.diff"]);
      expect(await readdir(join(runDir, "bundles", t))).toContain("bundle.json");
    }
    expect(await readFile(join(runDir, "results", "m", "pref-loss", "0", "junit.xml"), "utf8")).toContain("<testsuite");
    expect((await readdir(runDir)).sort()).toEqual(["bundles", "results", "run.json", "summary.json"]);

    // The same command again reuses every result, with or without a queue.
    const again = await evalExamples(jsonl, runDir, "--sandbox", "none", "--queue", url);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toContain("graded 0, reused 10");
    const report = await runCli(["report", runDir, "--format", "md"]);
    expect(report.exitCode, report.stderr).toBe(0);
  });

  it("a worker whose task differs refuses the job: an infra result naming the task, never a verdict", async () => {
    // A project of its own (a local upstream must lie inside one): the task and its upstream, copied.
    const proj = join(work, "worker-checkout");
    const tasks = join(proj, "tasks");
    await cp("examples/tasks/pref-loss", join(tasks, "pref-loss"), { recursive: true });
    await cp("test/fixtures/upstreams/pref-trainer", join(proj, "upstreams", "pref-trainer"), { recursive: true });
    await writeFile(join(proj, "package.json"), "{}\n");
    const manifest = join(tasks, "pref-loss", "task.json");
    const m = JSON.parse(await readFile(manifest, "utf8")) as { upstream: { path: string } };
    m.upstream.path = "../../upstreams/pref-trainer";
    await writeFile(manifest, JSON.stringify(m, null, 2));
    const test = join(tasks, "pref-loss", "tests");
    const [file] = (await readdir(test)).filter((f) => f.endsWith(".py"));
    await writeFile(join(test, file!), `${await readFile(join(test, file!), "utf8")}\n# changed on this worker only\n`);
    const jsonl = join(work, "one.jsonl");
    await writeJsonl(jsonl, [{ task_id: "pref-loss", model: "m", patch: await referencePatch(bundles, "pref-loss") }]);
    const worker = spawnCli(["worker", "--queue", redis.url, "--tasks-dir", tasks, "--bundles", join(work, "wb2")]);
    const runDir = join(work, "run-changed");
    const r = await runCli([
      "eval",
      "--tasks-dir",
      "examples/tasks",
      "--tasks",
      "pref-loss",
      "--submissions",
      jsonl,
      "--out",
      runDir,
      "--sandbox",
      "none",
      "--queue",
      redis.url,
      "--queue-attempts",
      "1",
    ]);
    await stopGracefully(worker);
    expect(r.exitCode, r.stderr).toBe(3); // every sample infra: the run proves nothing
    const result = (await readResults(runDir, "m")).get("pref-loss/0")!;
    expect(result.verdict).toBe("infra");
    expect(result.reason).toMatch(/cannot reproduce task 'pref-loss'.*hash to/);
    expect(result.reason).toContain("--tasks-dir");
  });

  it("a wrong password or no Redis stops with a clear error before grading", async () => {
    const jsonl = join(work, "one.jsonl");
    const bad = await runCli([
      "eval",
      "--tasks-dir",
      "examples/tasks",
      "--tasks",
      "pref-loss",
      "--submissions",
      jsonl,
      "--out",
      join(work, "run-auth"),
      "--queue",
      `redis://:wrong@127.0.0.1:${redis.port}`,
    ]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/refused the credentials.*hint: put the right password/);
    expect(bad.stderr).not.toContain("wrong@");
    const worker = await runCli(["worker", "--queue", "redis://127.0.0.1:1"]);
    expect(worker.exitCode).toBe(3);
    expect(worker.stderr).toMatch(/cannot reach Redis at redis:\/\/127\.0\.0\.1:1\/0/);
  });
});
