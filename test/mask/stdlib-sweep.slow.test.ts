import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkCompiles } from "../../src/mask/check-compile.js";
import { PythonMasker } from "../../src/mask/python/masker.js";
import { formatSweepReport, listStdlibFiles, sweepFiles } from "../../tools/sweep/stdlib.js";

const CLI = resolve("dist/cli/main.js");
const run = promisify(execFile);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "lmr-sweep-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

// Every 10th top-level stdlib file (17 of 168 on CPython 3.11, ~870 defs); the
// full sweep is `node scripts/stdlib-sweep.mjs`.
describe("stdlib sweep (subset)", () => {
  it("masks every function and method of every 10th stdlib file, each result checked", async () => {
    const files = (await listStdlibFiles()).filter((_, i) => i % 10 === 0);
    expect(files.length).toBeGreaterThan(10);
    const report = await sweepFiles(files);
    const summary = formatSweepReport(report);
    expect(report.unparsed, summary).toEqual([]);
    expect(report.failures, summary).toEqual([]);
    expect(report.defs).toBeGreaterThan(500);
    expect(report.ok).toBe(report.defs);
  }, 300_000);

  it("masks stdlib functions and methods through the CLI", async () => {
    const stdlib = await listStdlibFiles();
    const masker = new PythonMasker();
    const picks: { file: string; symbol: string; line?: number }[] = [];
    for (const name of ["heapq.py", "textwrap.py", "fractions.py", "argparse.py"]) {
      const file = stdlib.find((f) => f.endsWith(`/${name}`))!;
      const symbols = (await masker.listSymbols(await readFile(file, "utf8"))).filter((s) => s.kind !== "class");
      const s = symbols[Math.floor(symbols.length / 2)]!;
      picks.push({ file, symbol: s.name, ...(symbols.filter((o) => o.name === s.name).length > 1 ? { line: s.line } : {}) });
    }
    const outputs = [];
    for (const [i, p] of picks.entries()) {
      const out = join(dir, `stdlib-${i}.py`);
      const args = [CLI, "mask", p.file, "--symbol", p.symbol, ...(p.line ? ["--line", String(p.line)] : []), "--out", out, "--json"];
      const r = await run("node", args);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, targets: [{ symbol: p.symbol, mode: "body" }] });
      const before = await readFile(p.file);
      const after = await readFile(out);
      expect(after.equals(before)).toBe(false);
      expect(after.toString("utf8")).toContain(`# TODO: implement ${p.symbol}`);
      outputs.push(out);
    }
    expect((await checkCompiles(outputs)).every((o) => o.ok)).toBe(true);
  });
});
