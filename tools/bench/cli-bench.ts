import { spawnSync } from "node:child_process";
import { toolkitPath } from "../../dist/core/paths.js";
import { VALIDATORS, loadValidator, makeAjv, readSchemaText } from "../../dist/core/schema-validator.js";
import type { BenchContext, BenchResult, BenchRow } from "./types.js";

const CLI = toolkitPath("dist", "cli", "main.js");

/** Median wall time of a command, in ms, over `runs` runs (it must exit 0). */
function medianMs(args: string[], runs: number): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, args, { cwd: toolkitPath(), stdio: ["ignore", "ignore", "pipe"] });
    times.push(performance.now() - t0);
    if (r.status !== 0) throw new Error(`cli bench: node ${args.join(" ")} exited ${r.status}: ${String(r.stderr)}`);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
}

function medianOf(fn: () => void, runs: number): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
}

const row = (name: string, ms: number, baseMs: number): BenchRow => ({
  name,
  pairs: 1,
  ts_defs_per_s: 1000 / ms,
  py_defs_per_s: 1000 / baseMs,
  ratio: ms / baseMs,
  failures: 0,
});

/**
 * What a CLI call costs before its work: `lmr --version` and `lmr validate`
 * of one example against a bare `node -e 0`; and the task schema's validator
 * loaded as `npm run build` compiled it against compiling it in the process.
 * Columns: calls/s of each side, and the time ratio.
 */
export async function runCliBench(ctx: BenchContext): Promise<BenchResult> {
  const runs = ctx.quick ? 3 : 9;
  const bare = medianMs(["-e", "0"], runs);
  const rows = [
    row("lmr --version / node -e 0", medianMs([CLI, "--version"], runs), bare),
    row("lmr validate (1 task) / node -e 0", medianMs([CLI, "validate", "examples/tasks/pref-loss"], runs), bare),
  ];
  const text = readSchemaText(VALIDATORS.task);
  const schema = JSON.parse(text) as object;
  // a fresh module each time: require's cache would hide the load after the first
  const ahead = medianOf(() => loadValidator(VALIDATORS.task, text), 1);
  const now = medianOf(() => makeAjv(VALIDATORS.task).compile(schema), ctx.quick ? 3 : 5);
  rows.push(row("task schema: precompiled / compiled now", ahead, now));
  ctx.log(`[cli] bare node ${bare.toFixed(0)} ms; ${rows.map((r) => `${r.name}: ${r.ratio.toFixed(2)}`).join("; ")}`);
  return {
    name: "cli",
    labels: ["lmr", "baseline"],
    rows,
    notes: [
      "calls/s columns: the row's first side and its baseline; the time ratio is first/baseline.",
      "The precompiled validator is loaded once (require caches it); compiling is the median of several.",
    ],
  };
}
