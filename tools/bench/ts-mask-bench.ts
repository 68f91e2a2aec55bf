import { readFile } from "node:fs/promises";
import { TOOLKIT_ROOT } from "../../dist/core/paths.js";
import { loadTsMorph } from "../../dist/lang/ts-source.js";
import { listApiDefinitions, maskWithCompilerApi } from "../sweep/ts-api-index.js";
import { TsMasker } from "../../dist/mask/ts/masker.js";
import { listPackageSources, SWEEP_PACKAGES } from "../sweep/ts-packages.js";
import type { BenchContext, BenchResult } from "./types.js";

/**
 * TS/JS masking throughput: the ts-morph masker (src/mask/ts/masker.ts) against a baseline
 * written with the TypeScript compiler API alone (maskWithCompilerApi in tools/sweep/ts-api-index.ts), on
 * the same definitions: the functions and methods of the sweep's packages (scripts/ts-sweep.mjs)
 * that both find on the same line. Same work per definition on both sides, from the source
 * text to a checked result: parse, index the file's definitions, locate the one, splice the
 * TODO and throw, re-parse the result and refuse it on a syntax error (the masker caches no
 * parse here: cacheSize 0). Sources are in memory; only the masking loop is timed; best of a
 * few rounds, the two sides alternating.
 */
interface Pair {
  file: number;
  symbol: string;
  line?: number;
  start: number;
}

export async function runTsMaskBench(ctx: BenchContext): Promise<BenchResult> {
  const morph = await loadTsMorph();
  const ts = morph.ts;
  const every = ctx.quick ? 40 : 8;
  const rounds = ctx.quick ? 2 : 3;
  const files: string[] = [];
  for (const name of SWEEP_PACKAGES) files.push(...(await listPackageSources(name, TOOLKIT_ROOT)).files);
  const sources = await Promise.all(files.map((f) => readFile(f, "utf8")));
  const lister = new TsMasker("ts", { cacheSize: 0 });
  const all: Pair[] = [];
  let apiDefs = 0;
  for (const [i, source] of sources.entries()) {
    const api = listApiDefinitions(ts, ts.createSourceFile(files[i]!, source, ts.ScriptTarget.Latest, true));
    apiDefs += api.length;
    const symbols = (await lister.listSymbols(source, files[i]!).catch(() => [])).filter((s) => s.kind !== "class");
    const byLine = new Map<number, typeof symbols>();
    for (const s of symbols) byLine.set(s.decorator_line ?? s.line, [...(byLine.get(s.decorator_line ?? s.line) ?? []), s]);
    const names = new Map<string, number>();
    for (const s of symbols) names.set(s.name, (names.get(s.name) ?? 0) + 1);
    const apiLines = new Map<number, number>();
    for (const d of api) apiLines.set(d.line, (apiLines.get(d.line) ?? 0) + 1);
    for (const d of api) {
      const at = byLine.get(d.line);
      // one definition on that line on both sides: the same definition
      if (at?.length !== 1 || apiLines.get(d.line) !== 1) continue;
      const s = at[0]!;
      all.push({ file: i, symbol: s.name, ...(names.get(s.name)! > 1 ? { line: s.line } : {}), start: d.start });
    }
  }
  const pairs = all.filter((_, i) => i % every === 0);
  ctx.log(
    `ts-mask: ${pairs.length} of ${all.length} matched definitions (of ${apiDefs} the compiler API lists) in ${files.length} files of ${SWEEP_PACKAGES.join(", ")}; best of ${rounds} rounds`,
  );

  const masker = new TsMasker("ts", { cacheSize: 0 });
  const runMorph = async (sample: Pair[]): Promise<{ seconds: number; failures: number; out: (string | undefined)[] }> => {
    const out: (string | undefined)[] = [];
    let failures = 0;
    const t0 = performance.now();
    for (const p of sample) {
      try {
        out.push((await masker.mask(sources[p.file]!, [{ symbol: p.symbol, mode: "body", ...(p.line ? { line: p.line } : {}) }], files[p.file])).source);
      } catch {
        failures++;
        out.push(undefined);
      }
    }
    return { seconds: (performance.now() - t0) / 1000, failures, out };
  };
  const runApi = (sample: Pair[]): { seconds: number; failures: number; out: (string | undefined)[] } => {
    const out: (string | undefined)[] = [];
    const t0 = performance.now();
    for (const p of sample) out.push(maskWithCompilerApi(ts, sources[p.file]!, files[p.file]!, p.start, p.symbol));
    return { seconds: (performance.now() - t0) / 1000, failures: out.filter((o) => o === undefined).length, out };
  };
  await runMorph(pairs.slice(0, 20));
  runApi(pairs.slice(0, 20));
  let morphS = Infinity;
  let apiS = Infinity;
  let failures = 0;
  let same = 0;
  for (let r = 0; r < rounds; r++) {
    const m = await runMorph(pairs);
    const a = runApi(pairs);
    morphS = Math.min(morphS, m.seconds);
    apiS = Math.min(apiS, a.seconds);
    failures = Math.max(failures, m.failures + a.failures);
    if (r === 0) same = m.out.filter((o, i) => o !== undefined && o === a.out[i]).length;
    ctx.log(`  round ${r + 1}: ts-morph ${m.seconds.toFixed(2)} s, compiler API ${a.seconds.toFixed(2)} s`);
  }
  return {
    name: "ts-mask",
    labels: ["ts-morph", "compiler API"],
    rows: [
      {
        name: "cold: parse, index, mask, re-parse",
        pairs: pairs.length,
        ts_defs_per_s: pairs.length / morphS,
        py_defs_per_s: pairs.length / apiS,
        ratio: morphS / apiS,
        failures,
      },
    ],
    notes: [
      "ts-morph/compiler API time: below 1 means the ts-morph masker is faster. The baseline does the same edit with none of the masker's checks (header, JSDoc and decorators kept, overlaps, indentation detection).",
      `identical outputs ts-morph vs baseline: ${same}/${pairs.length} (where they differ it is the indentation seen so far: the masker uses the file's indent unit, tabs in immer, the baseline two spaces)`,
    ],
  };
}
