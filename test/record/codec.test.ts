import { execa } from "execa";
import { realpathSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { pythonBin } from "../helpers/git-fixture.js";
import { runPyChecks, type PyResult } from "./helpers.js";

/**
 * The codec's round trip (python/lmr_record/codec.py), under the interpreter the
 * tests use and under Debian's python3 when it is a different one (it has numpy,
 * pandas and torch here). Library cases are skipped, with the reason in the
 * test name, where the interpreter lacks the library.
 */
async function interpreters(): Promise<string[]> {
  const out = new Map<string, string>();
  for (const py of [pythonBin(), "/usr/bin/python3"]) {
    const r = await execa(py, ["-c", "import sys; print(sys.executable)"], { reject: false });
    if (r.exitCode !== 0) continue;
    const exe = String(r.stdout).trim();
    const key = realpathSync(exe);
    if (!out.has(key)) out.set(key, py);
  }
  return [...out.values()];
}

const runs: { python: string; results: PyResult[] }[] = [];
for (const python of await interpreters()) {
  runs.push({ python, results: await runPyChecks(python, "codec_roundtrip.py", ["python"]) });
}

for (const { python, results } of runs) {
  describe(`codec round trip under ${python}`, () => {
    it("covers every supported type and rejection", () => {
      expect(results.length).toBeGreaterThanOrEqual(30);
    });
    for (const r of results) {
      const name = r.status === "skip" ? `${r.name} (skipped: ${r.detail})` : r.name;
      it.skipIf(r.status === "skip")(name, () => {
        expect(r.status, r.detail).toBe("ok");
      });
    }
  });
}
