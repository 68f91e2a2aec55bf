import { spawn } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildBundle, BUNDLE_FILES, type BundleInfo } from "../bundle/index.js";
import { toolkitPath } from "../core/paths.js";
import { runEval } from "../evaluate/run-eval.js";
import { findTaskDirs, loadTask } from "../manifest/load.js";
import type { ResolvedTask } from "../manifest/types.js";
import { resolvePython } from "../runner/index.js";
import type { SandboxChoice } from "../runner/types.js";
import type { BenchContext, BenchResult } from "./types.js";

/**
 * What `lmr eval` costs over running the grader by hand. The same tasks and
 * submissions (each task's reference, K samples) are graded three ways, each
 * repeated and the median kept:
 *  (a) a bare loop of `python -m pytest lmr_tests` over trees prepared before
 *      the clock starts (workspace + reference + grader copied into temp dirs);
 *  (b) `runEval` with one job into a fresh run folder (bundles copied in
 *      beforehand, so (b) times grading, not building);
 *  (c) the same with two jobs.
 * Goals: (b)/(a) <= 1.10 and (b)/(c) >= 1.8 on 2 cores.
 */
export interface EvalBenchFigures {
  tasks: string[];
  samples: number;
  repeats: number;
  python: string;
  seconds: Record<string, number[]>;
  median_s: Record<string, number>;
  overhead_ratio: number;
  speedup_j2: number;
}

const TASK_DIRS = [toolkitPath("examples", "tasks"), toolkitPath("test", "fixtures", "bench", "tasks")];

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function runProcess(cmd: string, args: string[], cwd: string): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { cwd, stdio: "ignore", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/", PYTHONDONTWRITEBYTECODE: "1", OMP_NUM_THREADS: "1" } });
    child.on("error", reject);
    child.on("exit", (code) => resolvePromise(code ?? -1));
  });
}

async function loadTasks(): Promise<ResolvedTask[]> {
  const tasks: ResolvedTask[] = [];
  for (const root of TASK_DIRS) {
    const dirs = await findTaskDirs(root).catch(() => [] as string[]);
    for (const d of dirs) tasks.push(await loadTask(d));
  }
  return tasks;
}

/** One prepared tree per (task, sample): the graded tree, as the runner would assemble it. */
async function prepareBareTrees(bundles: BundleInfo[], tasks: ResolvedTask[], samples: number, root: string): Promise<string[]> {
  const trees: string[] = [];
  for (const [i, b] of bundles.entries()) {
    const mount = tasks[i]!.manifest.tests.mount ?? "lmr_tests";
    for (let s = 0; s < samples; s++) {
      const dir = join(root, `${b.task_id}-${s}`);
      await cp(join(b.dir, BUNDLE_FILES.workspace), dir, { recursive: true });
      await cp(join(b.dir, BUNDLE_FILES.reference), dir, { recursive: true });
      await cp(join(b.dir, BUNDLE_FILES.grader), join(dir, mount), { recursive: true });
      trees.push(dir);
    }
  }
  return trees;
}

async function writeSubmissions(bundles: BundleInfo[], samples: number, file: string): Promise<void> {
  const rows: string[] = [];
  for (const b of bundles) {
    const files: Record<string, string> = {};
    for (const t of b.targets) files[t.file] = await readFile(join(b.dir, BUNDLE_FILES.reference, t.file), "utf8");
    for (let s = 0; s < samples; s++) rows.push(JSON.stringify({ task_id: b.task_id, sample: s, model: "reference", files }));
  }
  await writeFile(file, rows.join("\n") + "\n");
}

export async function runEvalBench(ctx: BenchContext): Promise<BenchResult & { eval: EvalBenchFigures }> {
  const samples = ctx.quick ? 2 : 4;
  const repeats = ctx.quick ? 1 : 3;
  const tasks = await loadTasks();
  const python = await resolvePython({});
  const work = await mkdtemp(join(tmpdir(), "lmr-eval-bench-"));
  try {
    ctx.log(`eval: ${tasks.length} tasks x ${samples} samples, ${repeats} repeats, ${python.path} (${python.version})`);
    const bundles: BundleInfo[] = [];
    for (const t of tasks) bundles.push(await buildBundle(t, join(work, "bundles")));
    const trees = await prepareBareTrees(bundles, tasks, samples, join(work, "bare"));
    const subs = join(work, "submissions.jsonl");
    await writeSubmissions(bundles, samples, subs);

    const bare = async (): Promise<number> => {
      const t0 = performance.now();
      for (const tree of trees) {
        const code = await runProcess(python.path, ["-B", "-m", "pytest", "-q", "-p", "no:cacheprovider", "lmr_tests"], tree);
        if (code !== 0) throw new Error(`bare pytest failed (exit ${code}) in ${tree}`);
      }
      return (performance.now() - t0) / 1000;
    };
    let runNo = 0;
    const lmr = async (jobs: number, sandbox: SandboxChoice): Promise<number> => {
      const out = join(work, `run-${runNo++}`);
      await mkdir(out, { recursive: true });
      await cp(join(work, "bundles"), join(out, "bundles"), { recursive: true });
      const t0 = performance.now();
      const r = await runEval({ submissions: subs, tasks, outDir: out, jobs, sandbox, python: python.path });
      const seconds = (performance.now() - t0) / 1000;
      if (r.summary.totals.passed !== tasks.length * samples) {
        throw new Error(`lmr eval -j${jobs} passed ${r.summary.totals.passed} of ${tasks.length * samples} (${out})`);
      }
      await rm(out, { recursive: true, force: true });
      return seconds;
    };

    const variants: [string, () => Promise<number>][] = [
      ["(a) bare pytest loop", bare],
      ["(b) lmr eval -j1", () => lmr(1, "auto")],
      ["(c) lmr eval -j2", () => lmr(2, "auto")],
      ["(b') lmr eval -j1 --sandbox none", () => lmr(1, "none")],
    ];
    await bare(); // warm the page cache and the interpreter's imports
    const seconds: Record<string, number[]> = Object.fromEntries(variants.map(([n]) => [n, [] as number[]]));
    for (let r = 0; r < repeats; r++) {
      for (const [name, fn] of variants) {
        const s = await fn();
        seconds[name]!.push(s);
        ctx.log(`eval: repeat ${r + 1}: ${name}: ${s.toFixed(2)} s`);
      }
    }
    const med = Object.fromEntries(Object.entries(seconds).map(([k, v]) => [k, median(v)]));
    const a = med["(a) bare pytest loop"]!;
    const b = med["(b) lmr eval -j1"]!;
    const c = med["(c) lmr eval -j2"]!;
    const n = tasks.length * samples;
    const figures: EvalBenchFigures = {
      tasks: tasks.map((t) => t.manifest.id),
      samples: n,
      repeats,
      python: `${python.path} ${python.version}`,
      seconds,
      median_s: med,
      overhead_ratio: b / a,
      speedup_j2: b / c,
    };
    const notes = [
      `${n} samples (${tasks.map((t) => t.manifest.id).join(", ")}; ${samples} each), median of ${repeats}:`,
      ...Object.entries(med).map(([k, v]) => `  ${k.padEnd(34)} ${v.toFixed(2).padStart(7)} s  ${((v / n) * 1000).toFixed(0).padStart(5)} ms/sample`),
      `  overhead (b)/(a) = ${(b / a).toFixed(3)} (goal <= 1.10)`,
      `  speed-up (b)/(c) = ${(b / c).toFixed(3)} (goal >= 1.8 on 2 cores)`,
    ];
    return { name: "eval", rows: [], notes, eval: figures };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
