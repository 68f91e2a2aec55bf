#!/usr/bin/env node
import { runCliBench } from "./cli-bench.js";
import { runEvalBench } from "./eval-bench.js";
import { runGenerateBench } from "./generate-bench.js";
import { runMaskBench } from "./mask-bench.js";
import { runQueueBench } from "./queue-bench.js";
import { runSandboxBench } from "./sandbox-bench.js";
import { runTsMaskBench } from "./ts-mask-bench.js";
import type { Bench, BenchResult } from "./types.js";
import { runVerifyBench } from "./verify-bench.js";

/**
 * `npm run bench [-- NAME... --quick --json]`: runs named benchmarks (all by
 * default) and prints a table (or JSON). New benches register in BENCHES.
 */
const BENCHES: Bench[] = [
  { name: "mask", description: "tree-sitter masker vs a Python ast masker over the stdlib's functions", run: runMaskBench },
  { name: "ts-mask", description: "ts-morph masker vs the TypeScript compiler API directly on the TS sweep's definitions", run: runTsMaskBench },
  { name: "eval", description: "lmr eval -j1/-j2 vs a bare pytest loop over the example tasks", run: runEvalBench },
  { name: "verify", description: "cold lmr verify --force of the pilot tasks: the fast path vs the old per-run path, equal outcomes", run: runVerifyBench },
  { name: "sandbox", description: "per-sample grading cost under docker vs bwrap vs local over the example tasks", run: runSandboxBench },
  {
    name: "generate",
    description: "lmr generate requests/s at -j 8 against a local server answering in 50 ms, as a ratio to the ideal 160/s",
    run: runGenerateBench,
  },
  {
    name: "cli",
    description: "what a CLI call costs before its work (vs bare node), and the task schema precompiled vs compiled in the process",
    run: runCliBench,
  },
  { name: "queue", description: "lmr eval --queue: two workers vs one on CPU-bound tests, and the per-job overhead vs local lmr eval", run: runQueueBench },
];

function formatResult(r: BenchResult): string {
  if (r.rows.length === 0) return [`## ${r.name}`, ...r.notes].join("\n");
  const [a, b] = r.labels ?? ["TS", "Python"];
  const head = ["row", "defs", `${a} defs/s`, `${b} defs/s`, `${a}/${b} time`, "failures"];
  const body = r.rows.map((row) => [
    row.name,
    String(row.pairs),
    row.ts_defs_per_s.toFixed(0),
    row.py_defs_per_s.toFixed(0),
    row.ratio.toFixed(2),
    String(row.failures),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  return [`## ${r.name}`, line(head), ...body.map(line), ...r.notes].join("\n");
}

async function main(argv: string[]): Promise<number> {
  const flags = new Set(argv.filter((a) => a.startsWith("--")));
  const names = argv.filter((a) => !a.startsWith("--"));
  if (flags.has("--help")) {
    process.stdout.write(`usage: npm run bench -- [NAME...] [--quick] [--json]\n${BENCHES.map((b) => `  ${b.name}: ${b.description}`).join("\n")}\n`);
    return 0;
  }
  const unknown = names.filter((n) => !BENCHES.some((b) => b.name === n));
  if (unknown.length > 0) {
    process.stderr.write(`unknown bench: ${unknown.join(", ")} (known: ${BENCHES.map((b) => b.name).join(", ")})\n`);
    return 2;
  }
  const selected = names.length === 0 ? BENCHES : BENCHES.filter((b) => names.includes(b.name));
  const ctx = { quick: flags.has("--quick"), log: (l: string) => process.stderr.write(`${l}\n`) };
  const results: BenchResult[] = [];
  for (const b of selected) results.push(await b.run(ctx));
  process.stdout.write(flags.has("--json") ? `${JSON.stringify(results, null, 2)}\n` : `${results.map(formatResult).join("\n\n")}\n`);
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
