import { readFile, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { QueueStatus } from "../../src/queue/queue-status.js";
import type { Summary } from "../../src/report/index.js";
import { makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { explainNoRedis, startRedis, type RedisHandle } from "../helpers/redis-server.js";
import {
  PY_EXAMPLES,
  TASK_IDS,
  buildExampleBundles,
  countResultFiles,
  evalExamples,
  readResults,
  referenceFiles,
  referencePatch,
  stubPatch,
  verdicts,
  writeJsonl,
} from "../eval/helpers.js";
import { findAncestor, spawnCli, spawnWorker, stopGracefully, waitFor, type Spawned } from "./helpers.js";
import { jsonData } from "../helpers/run-cli.js";

/**
 * What a queue run survives, against a real redis-server: a worker killed
 * with -9 mid-grading, a coordinator killed and started again, Redis itself
 * killed and restarted empty. Each must end with exactly one result per
 * sample and the verdicts of a local `lmr eval` of the same submissions.
 * (`npx vitest run --config vitest.queue.config.ts`; .ci/run runs it.)
 */
const noRedis = explainNoRedis();
if (noRedis) console.warn(noRedis);
afterAll(removeTempDirs);

const TOTAL = TASK_IDS.length * 2;

describe.skipIf(noRedis !== undefined)("queue faults", () => {
  let redis: RedisHandle;
  let work: string;
  let jsonl: string;
  let marker: string;
  let started: string;
  let local: Record<string, string>;
  const spawned: Spawned[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    work = await makeTempDir("queue-faults");
    const bundles = await buildExampleBundles();
    marker = join(work, "slow");
    started = join(work, "started");
    // The first task's reference, slow at import while `marker` exists; it writes its pid to `started`.
    const slow = `import os as _o, time as _t\nopen(${JSON.stringify(started)}, "w").write(str(_o.getpid()))\nif _o.path.exists(${JSON.stringify(marker)}):\n    _t.sleep(60)\n`;
    const rows: unknown[] = [];
    for (const t of TASK_IDS) {
      if (rows.length === 0) {
        const files = await referenceFiles(bundles, t);
        const [f] = Object.keys(files);
        rows.push({ task_id: t, model: "m", files: { [f!]: `${slow}\n${files[f!]}` } });
      } else rows.push({ task_id: t, model: "m", patch: await referencePatch(bundles, t) });
      rows.push({ task_id: t, model: "m", patch: await stubPatch(bundles, t, work) });
    }
    jsonl = join(work, "subs.jsonl");
    await writeJsonl(jsonl, rows);
    const clean = await evalExamples(jsonl, join(work, "local"), "--sandbox", "none", "-j", "2");
    expect(clean.exitCode, clean.stderr).toBe(0);
    local = verdicts(await readResults(join(work, "local")));
    expect(Object.values(local).filter((v) => v === "passed")).toHaveLength(TASK_IDS.length);
  });

  afterAll(async () => {
    for (const p of spawned) if (p.child.exitCode === null) p.child.kill("SIGKILL");
    await redis?.stop();
  });

  const worker = (): Spawned => {
    const w = spawnWorker(redis.url, join(work, "worker-bundles"));
    spawned.push(w);
    return w;
  };
  const coordinator = (runDir: string): Spawned => {
    const c = spawnCli([
      "eval",
      "--tasks-dir",
      "examples/tasks",
      ...PY_EXAMPLES,
      "--submissions",
      jsonl,
      "--out",
      runDir,
      "--sandbox",
      "none",
      "--queue",
      redis.url,
      "--json",
    ]);
    spawned.push(c);
    return c;
  };
  const checkRun = async (runDir: string): Promise<void> => {
    expect(verdicts(await readResults(runDir))).toEqual(local);
    for (const t of TASK_IDS) {
      expect((await readdir(join(runDir, "results", "m", t))).sort()).toEqual(["0", "1"]);
      for (const s of ["0", "1"])
        expect((await readdir(join(runDir, "results", "m", t, s))).sort()).toEqual(["junit.xml", "log.txt", "result.json", "submission.diff"]);
    }
    expect(await readdir(runDir)).not.toContain(".lock");
  };

  it("kill -9 of a worker mid-grading: the other worker grades its job", async () => {
    await writeFile(marker, "");
    await rm(started, { force: true });
    const workers = [worker(), worker()];
    const runDir = join(work, "run-kill-worker");
    const coord = coordinator(runDir);
    const testPid = await waitFor("the slow sample to start", async () => Number(await readFile(started, "utf8").catch(() => "")) || undefined, 60_000);
    const victim = await findAncestor(
      testPid,
      workers.map((w) => w.pid),
    );
    expect(victim, "the slow test process descends from a worker").toBeDefined();
    await rm(marker);
    process.kill(-victim!, "SIGKILL");
    process.kill(testPid, "SIGKILL"); // the local backend's test processes are their own process group
    const code = await coord.exited;
    expect(code, coord.output()).toBe(0);
    const out = jsonData<{ summary: Summary; queue: QueueStatus }>(coord.output().slice(coord.output().indexOf("{")));
    expect(out.summary.totals).toMatchObject({ samples: TOTAL, graded: TOTAL });
    await checkRun(runDir);
    const survivor = workers.find((w) => w.pid !== victim)!;
    expect(await stopGracefully(survivor)).toBe(0);
  }, 150_000);

  it("a coordinator killed and started again resumes without regrading finished samples", async () => {
    const w = worker();
    const runDir = join(work, "run-kill-coordinator");
    const first = coordinator(runDir);
    await waitFor("some results", async () => ((await countResultFiles(runDir).catch(() => 0)) >= 3 ? true : undefined), 90_000);
    process.kill(-first.pid, "SIGKILL");
    await first.exited;
    const before = await readResults(runDir);
    expect(before.size).toBeLessThan(TOTAL);
    await new Promise((r) => setTimeout(r, 2_000)); // the worker goes on grading meanwhile
    const second = coordinator(runDir);
    expect(await second.exited, second.output()).toBe(0);
    const after = await readResults(runDir);
    for (const [k, r] of before) expect(after.get(k)?.finished_at, k).toBe(r.finished_at);
    await checkRun(runDir);
    expect(await stopGracefully(w)).toBe(0);
  }, 150_000);

  it("Redis killed and restarted empty mid-run: workers and coordinator reconnect, lost jobs are added again", async () => {
    const workers = [worker(), worker()];
    const runDir = join(work, "run-redis-restart");
    const coord = coordinator(runDir);
    await waitFor("some results", async () => ((await countResultFiles(runDir).catch(() => 0)) >= 2 ? true : undefined), 90_000);
    await redis.kill();
    await new Promise((r) => setTimeout(r, 1_500));
    await redis.start();
    expect(await coord.exited, coord.output()).toBe(0);
    expect(coord.output()).toMatch(/missing from the queue \(Redis restarted\?\); added again/);
    await checkRun(runDir);
    expect(await Promise.all(workers.map(stopGracefully))).toEqual([0, 0]);
  }, 150_000);
});
