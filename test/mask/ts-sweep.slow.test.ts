import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { formatTsSweepReport, listPackageSources, sweepTsFiles, type TsSweepReport } from "../../tools/sweep/ts-packages.js";

/**
 * A fixed sample of the TS sweep (scripts/ts-sweep.mjs masks every function
 * and method of the five packages; see CONTRIBUTING.md), type-checked: each
 * definition masked on its own must parse, change nothing outside its body,
 * keep its header and JSDoc, and add no type error to its file. Files from
 * every package, most of them ones where the stubs of before (`any`, or
 * nothing) added type errors: callbacks whose inferred return type the
 * rest of the file depends on, an arrow whose void became never, a closure
 * that assigned a variable read in another closure.
 */
const SAMPLE: Record<string, string[]> = {
  rxjs: ["src/internal/lastValueFrom.ts", "src/internal/operators/timeout.ts"],
  mobx: ["src/types/legacyobservablearray.ts"],
  immer: ["src/core/current.ts", "src/utils/plugins.ts"],
  "@reduxjs/toolkit": [
    "src/tests/getDefaultEnhancers.test-d.ts",
    "src/dynamicMiddleware/index.ts",
    "src/dynamicMiddleware/tests/index.test-d.ts",
    "src/entities/state_selectors.ts",
    "src/query/tests/buildSlice.test.ts",
    // a reducers callback whose rejected meta holds an empty mapped type: written `{}`, the stub's type was another one
    "src/tests/createSlice.test-d.ts",
  ],
  "@tanstack/query-core": ["src/focusManager.ts"],
};

async function sweep(name: string, files: string[], plainStubs = false): Promise<TsSweepReport> {
  const pkg = await listPackageSources(name);
  const paths = files.map((f) => join(pkg.root, f));
  for (const p of paths) expect(pkg.files, `${name} ships ${p}`).toContain(p);
  return sweepTsFiles(paths, { root: pkg.root, typeCheck: true, plainStubs });
}

describe("TS sweep (sample, type-checked)", () => {
  for (const [name, files] of Object.entries(SAMPLE)) {
    it(`${name}: every definition of ${files.length} file(s) masks with no new type error`, async () => {
      const report = await sweep(name, files);
      const summary = formatTsSweepReport(report, `${name}: `);
      expect(report.failures, summary).toEqual([]);
      expect(report.defs, summary).toBeGreaterThanOrEqual(files.length);
      expect(report.ok, summary).toBe(report.defs);
    });
  }

  it("the same check fails with the stubs of before: lastValueFrom's `next` assigned what `complete` reads", async () => {
    const report = await sweep("rxjs", ["src/internal/lastValueFrom.ts"], true);
    expect(report.failures.map((f) => [f.symbol, f.check])).toEqual([["lastValueFrom.next", "types"]]);
    expect(report.failures[0]!.message).toMatch(/TS2454: Variable '_value' is used before being assigned/);
  });

  // the script imports the sweep from dist-dev/ (tools/ builds there, outside the shipped dist/)
  beforeAll(() => {
    const tsc = spawnSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tools"], { encoding: "utf8", timeout: 120_000 });
    expect(tsc.status, tsc.stdout + tsc.stderr).toBe(0);
  }, 120_000);

  it("the script prints its usage for --help and refuses an unknown flag (it used to run the whole sweep)", () => {
    const run = (...args: string[]) => spawnSync(process.execPath, ["scripts/ts-sweep.mjs", ...args], { encoding: "utf8", timeout: 60_000 });
    const help = run("--help");
    expect([help.status, help.stdout]).toEqual([0, expect.stringMatching(/^usage: node scripts\/ts-sweep\.mjs /)]);
    for (const bad of [["--bogus"], ["--package"], ["--every", "0"]]) {
      const r = run(...bad);
      expect([bad, r.status, r.stdout], r.stderr).toEqual([bad, 2, ""]);
      expect(r.stderr).toMatch(/usage: /);
    }
  });
});
