import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { buildBundle, BUNDLE_FILES, type BundleInfo } from "../../dist/bundle/index.js";
import { toolkitPath } from "../../dist/core/paths.js";
import { TOOLKIT_VERSION, runEval } from "../../dist/evaluate/run-eval.js";
import { loadPytestTasks } from "./example-tasks.js";
import type { ResolvedTask } from "../../dist/manifest/types.js";
import { parseQueueUrl, withTimeout } from "../../dist/queue/connection.js";
import { createQueueDispatcher } from "../../dist/queue/dispatch-queue.js";
import type { BenchContext, BenchResult } from "./types.js";

/**
 * What the Redis queue costs and gives. Two measurements, each the median of
 * a few repeats, workers started (and their bundle caches warmed) before the
 * clock:
 *  - speed-up: the CPU-bound fixture (test/fixtures/bench, ~1 s of one core
 *    per sample) graded through the queue by one worker, then by two; goal
 *    t(1 worker) / t(2 workers) >= 1.8 on 2 cores;
 *  - per-job overhead: the example tasks (short tests, so fixed costs show)
 *    by `runEval` in this process with one job, then through the queue with
 *    one worker; (t(queue) - t(local)) / samples, goal <= 50 ms.
 * Both use --sandbox none, so the figures are the queue's, not bwrap's.
 */
export async function runQueueBench(ctx: BenchContext): Promise<BenchResult> {
  const missing = spawnSync("redis-server", ["--version"]).status !== 0;
  if (missing) return { name: "queue", rows: [], notes: ["skipped: redis-server is not installed (apt-get install redis-server)"] };
  const repeats = ctx.quick ? 1 : 3;
  const work = await mkdtemp(join(tmpdir(), "lmr-queue-bench-"));
  const port = await findFreePort();
  const redis = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--dir", work, "--save", "", "--appendonly", "no"], { stdio: "ignore" });
  const url = `redis://127.0.0.1:${port}`;
  const workers: ChildProcess[] = [];
  const notes: string[] = [
    `load average before: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")} on ${availableParallelism()} cores; median of ${repeats}`,
  ];
  try {
    await waitForRedis(url);
    const examples = await loadTasks(toolkitPath("examples", "tasks"));
    const cpu = await loadTasks(toolkitPath("test", "fixtures", "bench", "tasks"));
    // Workers read the tasks from the folder the group's tasks came from.
    let workerTasksDir = "";
    const startWorkers = (n: number): void => {
      while (workers.length > n) stopWorker(workers.pop()!);
      while (workers.length < n)
        workers.push(
          spawn(
            process.execPath,
            [toolkitPath("dist", "cli", "main.js"), "worker", "--queue", url, "--tasks-dir", workerTasksDir, "--bundles", join(work, "worker-bundles")],
            { stdio: "ignore" },
          ),
        );
    };
    let runNo = 0;
    const grade = async (tasks: ResolvedTask[], subs: string, bundles: string, queue: boolean): Promise<number> => {
      const out = join(work, `run-${runNo++}`);
      await mkdir(out, { recursive: true });
      await cp(bundles, join(out, "bundles"), { recursive: true });
      const dispatcher = queue ? createQueueDispatcher({ connection: parseQueueUrl(url), sandbox: "none", toolkitVersion: TOOLKIT_VERSION }) : undefined;
      const t0 = performance.now();
      const r = await runEval({ submissions: subs, tasks, outDir: out, jobs: 1, sandbox: "none", ...(dispatcher ? { dispatcher } : {}) });
      const s = (performance.now() - t0) / 1000;
      const passed = r.results.filter((x) => x.verdict === "passed").length;
      if (passed !== r.results.length) throw new Error(`queue bench: ${passed} of ${r.results.length} passed in ${out}`);
      await rm(out, { recursive: true, force: true });
      return s;
    };
    const measure = async (label: string, tasks: ResolvedTask[], samples: number, variants: [string, number | "local"][]): Promise<Record<string, number>> => {
      const dir = join(work, label);
      const built = await prepare(tasks, samples, dir);
      const med: Record<string, number> = {};
      const times: Record<string, number[]> = {};
      for (const [name, w] of variants) {
        if (dirname(tasks[0]!.dir) !== workerTasksDir) startWorkers(0);
        workerTasksDir = dirname(tasks[0]!.dir);
        if (w !== "local") {
          startWorkers(w);
          await grade(tasks, built.subs, built.bundles, true); // warm-up: bundles cached, interpreter imports warm
        }
        for (let r = 0; r < repeats; r++) {
          const s = await grade(tasks, built.subs, built.bundles, w !== "local");
          (times[name] ??= []).push(s);
          ctx.log(`queue: ${label}: ${name}: ${s.toFixed(2)} s`);
        }
        med[name] = median(times[name]!);
      }
      return med;
    };
    const cpuSamples = ctx.quick ? 4 : 8;
    const sp = await measure("cpu", cpu, cpuSamples, [
      ["1 worker", 1],
      ["2 workers", 2],
    ]);
    const exSamples = ctx.quick ? 2 : 4;
    const ov = await measure("examples", examples, exSamples, [
      ["local -j1", "local"],
      ["queue, 1 worker", 1],
    ]);
    const n = examples.length * exSamples;
    notes.push(
      `cpu-sieve (CPU-bound, ~1 s/sample), ${cpu.length * cpuSamples} samples: 1 worker ${sp["1 worker"]!.toFixed(2)} s, 2 workers ${sp["2 workers"]!.toFixed(2)} s`,
      `  speed-up 1→2 workers = ${(sp["1 worker"]! / sp["2 workers"]!).toFixed(3)} (goal >= 1.8 on 2 cores)`,
      `example tasks (short tests), ${n} samples: local -j1 ${ov["local -j1"]!.toFixed(2)} s, queue with 1 worker ${ov["queue, 1 worker"]!.toFixed(2)} s`,
      `  per-job overhead = ${(((ov["queue, 1 worker"]! - ov["local -j1"]!) / n) * 1000).toFixed(0)} ms (goal <= 50 ms)`,
      `load average after: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}`,
    );
    return { name: "queue", rows: [], notes };
  } finally {
    for (const w of workers) stopWorker(w);
    redis.kill("SIGKILL");
    await rm(work, { recursive: true, force: true });
  }
}

function stopWorker(w: ChildProcess): void {
  if (w.exitCode === null) w.kill("SIGKILL");
}

const loadTasks = (root: string): Promise<ResolvedTask[]> => loadPytestTasks(root);

/** Bundles built once (copied into each run folder) and a submissions file of K references per task. */
async function prepare(tasks: ResolvedTask[], samples: number, dir: string): Promise<{ bundles: string; subs: string }> {
  const bundles = join(dir, "bundles");
  const built: BundleInfo[] = [];
  for (const t of tasks) built.push(await buildBundle(t, bundles));
  const rows: string[] = [];
  for (const b of built) {
    const files: Record<string, string> = {};
    for (const t of b.targets) files[t.file] = await readFile(join(b.dir, BUNDLE_FILES.reference, t.file), "utf8");
    for (let s = 0; s < samples; s++) rows.push(JSON.stringify({ task_id: b.task_id, sample: s, model: "reference", files }));
  }
  const subs = join(dir, "subs.jsonl");
  await writeFile(subs, rows.join("\n") + "\n");
  return { bundles, subs };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

async function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const a = srv.address();
      srv.close(() => resolve(typeof a === "object" && a ? a.port : 0));
    });
  });
}

async function waitForRedis(url: string): Promise<void> {
  const { connectRedis } = await import("../../dist/queue/connection.js");
  for (let i = 0; ; i++) {
    try {
      const r = await withTimeout(connectRedis(parseQueueUrl(url)), 2_000);
      r.disconnect();
      return;
    } catch (err) {
      if (i > 50) throw err;
      await new Promise((res) => setTimeout(res, 100));
    }
  }
}
