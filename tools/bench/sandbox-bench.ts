import { mkdtemp, readFile, rm } from "node:fs/promises";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { buildBundle, BUNDLE_FILES, type BundleInfo } from "../../dist/bundle/index.js";
import { ensureEnv, normaliseEnvironment } from "../../dist/env/index.js";
import { loadPytestTasks } from "./example-tasks.js";
import type { ResolvedTask } from "../../dist/manifest/types.js";
import { findDockerTarget, probeBwrap, resolvePython, runTests } from "../../dist/runner/index.js";
import type { PythonEnv, RunRequest, SandboxChoice } from "../../dist/runner/types.js";
import type { BenchContext, BenchResult } from "./types.js";

/**
 * What each sandbox costs per graded sample: the example tasks' references
 * graded with runTests (the grading step of lmr eval) under local, bwrap and
 * docker, interleaved (task by task, backend by backend, R rounds) so that
 * load from elsewhere hits all three alike; medians per sample, ratios, and
 * the per-sample overhead over local. Images are built (or found) and each
 * backend warmed before the clock starts: "images warm". Goal: docker <= 1.5x bwrap.
 */
export interface SandboxBenchFigures {
  tasks: string[];
  rounds: number;
  /** Per backend: every sample's seconds. */
  seconds: Record<string, number[]>;
  median_ms: Record<string, number>;
  ratios: Record<string, number>;
  skipped: Record<string, string>;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

interface Sample {
  task: ResolvedTask;
  req: Omit<RunRequest, "sandbox">;
}

async function prepareSamples(tasks: ResolvedTask[], work: string, python: PythonEnv): Promise<Sample[]> {
  const out: Sample[] = [];
  for (const task of tasks) {
    const bundle: BundleInfo = await buildBundle(task, join(work, "bundles"));
    const overlay: Record<string, string> = {};
    for (const f of new Set(bundle.targets.map((t) => t.file))) overlay[f] = await readFile(join(bundle.dir, BUNDLE_FILES.reference, f), "utf8");
    const m = task.manifest;
    out.push({
      task,
      req: {
        tree: join(bundle.dir, BUNDLE_FILES.workspace),
        grader: join(bundle.dir, BUNDLE_FILES.grader),
        overlay,
        ...(m.tests.mount ? { mount: m.tests.mount } : {}),
        python,
        environment: m.environment,
        timeoutTotalS: m.tests.timeout_total_s,
        timeoutPerTestS: m.tests.timeout_per_test_s,
        hidePaths: [bundle.dir, task.dir],
      },
    });
  }
  return out;
}

export async function runSandboxBench(ctx: BenchContext): Promise<BenchResult & { sandbox: SandboxBenchFigures }> {
  const rounds = ctx.quick ? 2 : 6;
  const tasks = await loadPytestTasks();
  const python = await resolvePython({});
  const skipped: Record<string, string> = {};
  const backends: { name: string; sandbox: SandboxChoice }[] = [{ name: "local", sandbox: "none" }];
  const bwrap = await probeBwrap();
  if (bwrap.ok) backends.push({ name: "bwrap", sandbox: "bwrap" });
  else skipped.bwrap = bwrap.reason ?? "not available";
  try {
    for (const t of tasks) await ensureEnv(normaliseEnvironment(t.manifest.environment));
    const found = await findDockerTarget(tasks[0]!.manifest.environment);
    if ("target" in found) backends.push({ name: "docker", sandbox: "docker" });
    else skipped.docker = found.reason;
  } catch (err) {
    skipped.docker = (err as Error).message;
  }
  const work = await mkdtemp(join(tmpdir(), "lmr-sandbox-bench-"));
  const seconds: Record<string, number[]> = Object.fromEntries(backends.map((b) => [b.name, [] as number[]]));
  const load0 = loadavg();
  try {
    const samples = await prepareSamples(tasks, work, python);
    const once = async (s: Sample, b: (typeof backends)[number]): Promise<number> => {
      const t0 = performance.now();
      const o = await runTests({ ...s.req, sandbox: b.sandbox });
      const dt = (performance.now() - t0) / 1000;
      if (o.status !== "passed" || o.backend !== (b.name === "local" ? "local" : b.name)) {
        throw new Error(`sandbox bench: ${s.task.manifest.id} under ${b.name}: ${o.status} on ${o.backend} (${o.reason ?? ""})`);
      }
      return dt;
    };
    for (const s of samples) for (const b of backends) await once(s, b); // warm caches, images, interpreters
    for (let r = 0; r < rounds; r++) {
      for (const s of samples) for (const b of backends) seconds[b.name]!.push(await once(s, b));
      ctx.log(`sandbox: round ${r + 1}/${rounds}: ${backends.map((b) => `${b.name} ${(median(seconds[b.name]!) * 1000).toFixed(0)} ms`).join(", ")}`);
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  const med = Object.fromEntries(Object.entries(seconds).map(([k, v]) => [k, median(v) * 1000]));
  const ratios: Record<string, number> = {};
  if (med.bwrap && med.local) ratios["bwrap/local"] = med.bwrap / med.local;
  if (med.docker && med.local) ratios["docker/local"] = med.docker / med.local;
  if (med.docker && med.bwrap) ratios["docker/bwrap"] = med.docker / med.bwrap;
  const n = tasks.length * rounds;
  const notes = [
    `${tasks.length} example tasks x ${rounds} rounds = ${n} samples per backend, interleaved; reference submissions; ${python.path} ${python.version} on the host`,
    `load average before ${load0.map((l) => l.toFixed(1)).join(" ")}, after ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")} on ${availableParallelism()} cores`,
    ...Object.entries(med).map(
      ([k, v]) =>
        `  ${k.padEnd(7)} median ${v.toFixed(0).padStart(5)} ms/sample, min ${(Math.min(...seconds[k]!) * 1000).toFixed(0).padStart(5)} ms${med.local && k !== "local" ? `, +${(v - med.local).toFixed(0)} ms over local` : ""}`,
    ),
    ...Object.entries(ratios).map(([k, v]) => `  ${k} = ${v.toFixed(2)}${k === "docker/bwrap" ? " (goal <= 1.5 with images warm)" : ""}`),
    ...Object.entries(skipped).map(([k, v]) => `  ${k}: not measured: ${v}`),
  ];
  return { name: "sandbox", rows: [], notes, sandbox: { tasks: tasks.map((t) => t.manifest.id), rounds, seconds, median_ms: med, ratios, skipped } };
}
