import { spawn } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, rmdir, writeFile } from "node:fs/promises";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { buildBundle, BUNDLE_FILES, type BundleInfo } from "../../dist/bundle/index.js";
import { toolkitPath } from "../../dist/core/paths.js";
import { runEval } from "../../dist/evaluate/run-eval.js";
import { loadPytestTasks } from "./example-tasks.js";
import type { ResolvedTask } from "../../dist/manifest/types.js";
import { resolvePython } from "../../dist/runner/index.js";
import type { PythonEnv, SandboxChoice } from "../../dist/runner/types.js";
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
 * (b") is (b) with a fresh tests' process per sample (--no-fork-server): what forking each
 * task's oracles from one server saves.
 * Goals: (b)/(a) <= 1.15 (issue 25) and (b)/(c) >= 1.8 on 2 cores. Two groups: the
 * example tasks (short tests: fixed costs dominate) and a bench-only task
 * whose tests keep a core busy (test/fixtures/bench), where -j2 has work to
 * share. (b') is (b) without bwrap, to tell the sandbox's cost from ours.
 */
export interface EvalBenchFigures {
  group: string;
  tasks: string[];
  samples: number;
  repeats: number;
  python: string;
  seconds: Record<string, number[]>;
  median_s: Record<string, number>;
  min_s: Record<string, number>;
  /** CPU seconds (evaluator + every test process), median per variant. */
  median_cpu_s: Record<string, number>;
  overhead_ratio: number;
  speedup_j2: number;
  /** (b)/(a) in CPU seconds. */
  overhead_ratio_cpu: number;
}

const TASK_DIRS = [toolkitPath("examples", "tasks"), toolkitPath("test", "fixtures", "bench", "tasks")];

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const CPUACCT = "/sys/fs/cgroup/cpuacct";

/**
 * CPU seconds of this process and all its descendants. With a writable
 * cpuacct cgroup (root here) the bench moves itself into its own group and
 * reads its usage: that counts the sandboxed test processes too, which bwrap
 * reaps itself (so /proc/self/stat's cutime misses them). Much less disturbed
 * than wall time by other load on the machine.
 */
interface CpuMeter {
  read(): Promise<number>;
  /** "cgroup" counts every descendant; "children" only those this process waited for (not bwrap's). */
  kind: "cgroup" | "children";
  close(): Promise<void>;
}

async function openCpuMeter(): Promise<CpuMeter> {
  const dir = join(CPUACCT, `lmr-eval-bench-${process.pid}`);
  try {
    await mkdir(dir);
    await writeFile(join(dir, "cgroup.procs"), String(process.pid));
    return {
      kind: "cgroup",
      read: async () => Number(await readFile(join(dir, "cpuacct.usage"), "utf8")) / 1e9,
      async close() {
        await writeFile(join(CPUACCT, "cgroup.procs"), String(process.pid)).catch(() => {});
        await rmdir(dir).catch(() => {});
      },
    };
  } catch {
    await rmdir(dir).catch(() => {});
    return {
      kind: "children",
      async read() {
        const stat = await readFile("/proc/self/stat", "utf8");
        const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        const self = process.cpuUsage();
        return (Number(f[13]) + Number(f[14])) / 100 + (self.user + self.system) / 1e6;
      },
      close: async () => {},
    };
  }
}

function runProcess(cmd: string, args: string[], cwd: string): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, {
      cwd,
      stdio: "ignore",
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/", PYTHONDONTWRITEBYTECODE: "1", OMP_NUM_THREADS: "1" },
    });
    child.on("error", reject);
    child.on("exit", (code) => resolvePromise(code ?? -1));
  });
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

interface Group {
  label: string;
  tasks: ResolvedTask[];
  samples: number;
}

export async function runEvalBench(ctx: BenchContext): Promise<BenchResult & { eval: EvalBenchFigures[] }> {
  const repeats = ctx.quick ? 1 : 3;
  const [examples, cpu] = await Promise.all(TASK_DIRS.map((d) => loadPytestTasks(d)));
  const groups: Group[] = [
    { label: "example tasks (short tests)", tasks: examples!, samples: ctx.quick ? 2 : 4 },
    { label: "cpu-sieve (CPU-bound tests, ~1 s)", tasks: cpu!, samples: ctx.quick ? 2 : 6 },
  ];
  const python = await resolvePython({});
  const figures: EvalBenchFigures[] = [];
  const meter = await openCpuMeter();
  const notes: string[] = [
    `${python.path} ${python.version}; median of ${repeats}; load average before: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
    `CPU = seconds of CPU used by the variant, evaluator and test processes together (${meter.kind === "cgroup" ? "cpuacct cgroup" : "waited-for children only: bwrap's sandboxes are missing"})`,
  ];
  try {
    for (const g of groups) figures.push(await measureGroup(g, repeats, python, meter, ctx));
  } finally {
    await meter.close();
  }
  for (const f of figures) {
    const n = f.samples;
    notes.push(
      `${f.group}: ${n} samples (${f.tasks.join(", ")})`,
      `  ${"variant".padEnd(34)} ${"wall".padStart(7)}    ${"/sample".padStart(7)}  ${"min".padStart(6)}  ${"CPU".padStart(6)}`,
      ...Object.entries(f.median_s).map(
        ([k, v]) =>
          `  ${k.padEnd(34)} ${v.toFixed(2).padStart(7)} s  ${((v / n) * 1000).toFixed(0).padStart(5)} ms  ${f.min_s[k]!.toFixed(2).padStart(6)}  ${f.median_cpu_s[k]!.toFixed(2).padStart(6)}`,
      ),
      `  overhead (b)/(a) = ${f.overhead_ratio.toFixed(3)} wall, ${(f.min_s["(b) lmr eval -j1"]! / f.min_s["(a) bare pytest loop"]!).toFixed(3)} best-of, ${f.overhead_ratio_cpu.toFixed(3)} CPU (goal <= 1.15)`,
      `  speed-up (b)/(c) = ${f.speedup_j2.toFixed(3)} (goal >= 1.8 on 2 cores)`,
    );
  }
  notes.push(
    `load average after: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")} on ${availableParallelism()} cores`,
  );
  return { name: "eval", rows: [], notes, eval: figures };
}

async function measureGroup(g: Group, repeats: number, python: PythonEnv, meter: CpuMeter, ctx: BenchContext): Promise<EvalBenchFigures> {
  const { tasks, samples } = g;
  const work = await mkdtemp(join(tmpdir(), "lmr-eval-bench-"));
  try {
    ctx.log(`eval: ${g.label}: ${tasks.length} task(s) x ${samples} samples, ${repeats} repeats`);
    const bundles: BundleInfo[] = [];
    for (const t of tasks) bundles.push(await buildBundle(t, join(work, "bundles")));
    const trees = await prepareBareTrees(bundles, tasks, samples, join(work, "bare"));
    const subs = join(work, "submissions.jsonl");
    await writeSubmissions(bundles, samples, subs);

    // The baseline is what a person runs by hand: pytest in one process and the code under test in a
    // candidate of its own (lmr_bridge/by_hand.py), no sandbox, no results channel, no limits; the
    // tests cannot run without the bridge any more, so the bridge's own cost is in both columns.
    const byHand = join(toolkitPath("python"), "lmr_bridge", "by_hand.py");
    const setupArgs = (i: number): string[] => {
      const cand = tasks[Math.floor(i / samples)]!.manifest.tests.candidate;
      const mount = tasks[Math.floor(i / samples)]!.manifest.tests.mount ?? "lmr_tests";
      return cand?.setup ? ["--support", join(trees[i]!, mount), "--setup", join(trees[i]!, mount, cand.setup)] : [];
    };
    const bare = async (): Promise<number> => {
      const t0 = performance.now();
      for (const [i, tree] of trees.entries()) {
        const code = await runProcess(python.path, ["-B", byHand, "--tree", tree, ...setupArgs(i), "--", "-q", "lmr_tests"], tree);
        if (code !== 0) throw new Error(`bare pytest failed (exit ${code}) in ${tree}`);
      }
      return (performance.now() - t0) / 1000;
    };
    let runNo = 0;
    const lmr = async (jobs: number, sandbox: SandboxChoice, forkServer = true): Promise<number> => {
      const out = join(work, `run-${runNo++}`);
      await mkdir(out, { recursive: true });
      await cp(join(work, "bundles"), join(out, "bundles"), { recursive: true });
      const t0 = performance.now();
      const r = await runEval({ submissions: subs, tasks, outDir: out, jobs, sandbox, python: python.path, forkServer });
      const seconds = (performance.now() - t0) / 1000;
      const passed = r.results.filter((x) => x.verdict === "passed").length;
      if (r.reused !== 0 || passed !== tasks.length * samples) {
        throw new Error(`lmr eval -j${jobs} passed ${passed} of ${tasks.length * samples}, reused ${r.reused} (${out})`);
      }
      await rm(out, { recursive: true, force: true });
      return seconds;
    };

    const variants: [string, () => Promise<number>][] = [
      ["(a) bare pytest loop", bare],
      // bwrap by name: auto would take docker where the examples' image is built (the sandbox bench compares them)
      ["(b) lmr eval -j1", () => lmr(1, "bwrap")],
      ["(c) lmr eval -j2", () => lmr(2, "bwrap")],
      ["(b') lmr eval -j1 --sandbox none", () => lmr(1, "none")],
      ['(b") lmr eval -j1 --no-fork-server', () => lmr(1, "bwrap", false)],
    ];
    await bare(); // warm the page cache and the interpreter's imports
    const seconds: Record<string, number[]> = Object.fromEntries(variants.map(([n]) => [n, [] as number[]]));
    const cpu: Record<string, number[]> = Object.fromEntries(variants.map(([n]) => [n, [] as number[]]));
    for (let r = 0; r < repeats; r++) {
      for (const [name, fn] of variants) {
        const c0 = await meter.read();
        const s = await fn();
        const c = (await meter.read()) - c0;
        seconds[name]!.push(s);
        cpu[name]!.push(c);
        ctx.log(`eval: ${g.label}: repeat ${r + 1}: ${name}: ${s.toFixed(2)} s wall, ${c.toFixed(2)} s CPU`);
      }
    }
    const med = Object.fromEntries(Object.entries(seconds).map(([k, v]) => [k, median(v)]));
    const medCpu = Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, median(v)]));
    const b = med["(b) lmr eval -j1"]!;
    return {
      group: g.label,
      tasks: tasks.map((t) => t.manifest.id),
      samples: tasks.length * samples,
      repeats,
      python: `${python.path} ${python.version}`,
      seconds,
      median_s: med,
      min_s: Object.fromEntries(Object.entries(seconds).map(([k, v]) => [k, Math.min(...v)])),
      median_cpu_s: medCpu,
      overhead_ratio: b / med["(a) bare pytest loop"]!,
      speedup_j2: b / med["(c) lmr eval -j2"]!,
      overhead_ratio_cpu: medCpu["(b) lmr eval -j1"]! / medCpu["(a) bare pytest loop"]!,
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
