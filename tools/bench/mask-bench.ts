import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { toolkitPath } from "../../dist/core/paths.js";
import { PythonMasker } from "../../dist/mask/python/masker.js";
import type { VerifyMode } from "../../dist/mask/python/verify.js";
import { resolvePython } from "../../dist/mask/python/worker.js";
import { listStdlibFiles } from "../sweep/stdlib.js";
import type { BenchContext, BenchResult } from "./types.js";

/**
 * Masking throughput: the tree-sitter masker against a Python `ast` masker
 * (bench/ast_masker.py) on the same (file, symbol, line) pairs: every function
 * and method of the stdlib files the sweep uses. Fairness: both sides get the
 * sources in memory and time only their masking loop (no process start, no
 * file reads); both locate by qualified name + line, index every def of a file
 * the same way, splice the same text, and in "verify" rows re-parse the result.
 * - cached: each file parsed and indexed once; per pair locate + splice (+ verify);
 * - cold: parse + index per pair (a sample of pairs, to bound the run time).
 * Each row is the best of a few rounds, TS and Python alternating, so that
 * load from other processes hits both sides alike.
 */
interface Pair {
  file: number;
  symbol: string;
  line: number;
}

interface PythonRun {
  pairs: number;
  seconds: number;
  failures: number;
  digests?: string[];
}

interface Variant {
  name: string;
  /** Use every n-th pair (the slow rows use a sample so that a run takes minutes, not tens of minutes). */
  every: number;
  cache: boolean;
  verify: VerifyMode;
}

const VARIANTS: Variant[] = [
  { name: "cached, verify changed", every: 1, cache: true, verify: "changed" },
  { name: "cached, no verify", every: 1, cache: true, verify: "none" },
  { name: "cached, verify full", every: 10, cache: true, verify: "full" },
  { name: "cold, verify changed", every: 20, cache: false, verify: "changed" },
  { name: "cold, no verify", every: 20, cache: false, verify: "none" },
];

export async function runMaskBench(ctx: BenchContext): Promise<BenchResult> {
  const python = resolvePython();
  const rounds = ctx.quick ? 2 : 3;
  const allFiles = await listStdlibFiles(python);
  const files = ctx.quick ? allFiles.filter((_, i) => i % 10 === 0) : allFiles;
  const sources = await Promise.all(files.map(async (f) => new TextDecoder("utf-8", { ignoreBOM: true }).decode(await readFile(f))));
  const pairs = await listPairs(sources);
  ctx.log(`mask: ${pairs.length} defs in ${files.length} stdlib files (${python}); best of ${rounds} rounds, TS and Python alternating`);

  const rows: BenchResult["rows"] = [];
  let digests: string[] | undefined;
  for (const v of VARIANTS) {
    const sample = pairs.filter((_, i) => i % v.every === 0);
    await timeTs(sources, sample.slice(0, 20), v.cache, v.verify); // warm up JIT and WASM
    let ts = Infinity;
    let py = Infinity;
    let failures = 0;
    for (let r = 0; r < rounds; r++) {
      const t = await timeTs(sources, sample, v.cache, v.verify);
      const p = await timePython(python, files, sample, v.cache, v.verify, digests === undefined && v.every === 1 && v.verify === "none");
      digests ??= p.digests;
      ts = Math.min(ts, t.seconds);
      py = Math.min(py, p.seconds);
      failures = Math.max(failures, t.failures + p.failures);
    }
    rows.push({ name: v.name, pairs: sample.length, ts_defs_per_s: sample.length / ts, py_defs_per_s: sample.length / py, ratio: ts / py, failures });
    ctx.log(`  ${v.name}: TS ${ts.toFixed(2)} s, Python ${py.toFixed(2)} s (${sample.length} defs)`);
  }
  const same = digests ? await countSameOutputs(sources, pairs, digests) : undefined;
  return {
    name: "mask",
    rows,
    notes: [
      "TS/Python time: below 1 means the TS masker is faster. Both get the sources in memory and time only the masking loop.",
      "verify changed: both re-parse only the masked definition (tree-sitter / ast.parse); verify full: the whole result (TS incrementally).",
      ...(same === undefined
        ? []
        : [
            `identical outputs TS vs Python: ${same}/${pairs.length} (the rest differ only in comments, which ast cannot see: the baseline keeps comments around the first and last statements)`,
          ]),
    ],
  };
}

async function listPairs(sources: string[]): Promise<Pair[]> {
  const masker = new PythonMasker({ cacheSize: 1 });
  const pairs: Pair[] = [];
  for (const [file, source] of sources.entries()) {
    for (const s of await masker.listSymbols(source)) if (s.kind !== "class") pairs.push({ file, symbol: s.name, line: s.line });
  }
  masker.clearCache();
  return pairs;
}

async function timeTs(sources: string[], pairs: Pair[], cache: boolean, verify: VerifyMode): Promise<{ seconds: number; failures: number }> {
  const masker = new PythonMasker({ cacheSize: cache ? 1 : 0, verify });
  let failures = 0;
  const started = performance.now();
  for (const p of pairs) {
    try {
      const out = await masker.mask(sources[p.file]!, [{ symbol: p.symbol, mode: "body", line: p.line }]);
      // V8 builds the result as a rope; reading a character flattens it, so TS pays for a whole output string as Python does.
      if (out.source.charCodeAt(0) < 0) failures++;
    } catch {
      failures++;
    }
  }
  const seconds = (performance.now() - started) / 1000;
  masker.clearCache();
  return { seconds, failures };
}

function timePython(python: string, files: string[], pairs: Pair[], cache: boolean, verify: VerifyMode, digests: boolean): Promise<PythonRun> {
  const job = JSON.stringify({ files, pairs: pairs.map((p) => [p.file, p.symbol, p.line]), cache, verify, digests });
  return new Promise((resolve, reject) => {
    const child = spawn(python, ["-I", toolkitPath("bench", "ast_masker.py")], { stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (err += c));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`bench/ast_masker.py exited ${code}: ${err.slice(-2000)}`));
      else resolve(JSON.parse(out) as PythonRun);
    });
    child.stdin.end(job);
  });
}

async function countSameOutputs(sources: string[], pairs: Pair[], digests: string[]): Promise<number> {
  const masker = new PythonMasker({ cacheSize: 1, verify: "none" });
  let same = 0;
  for (const [i, p] of pairs.entries()) {
    const out = await masker.mask(sources[p.file]!, [{ symbol: p.symbol, mode: "body", line: p.line }]);
    if (createHash("sha256").update(out.source, "utf8").digest("hex") === digests[i]) same++;
  }
  masker.clearCache();
  return same;
}
