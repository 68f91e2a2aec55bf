import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TaskManifest } from "../../src/manifest/types.js";
import { resolvePython, runTests } from "../../src/runner/index.js";
import type { RunOutcome } from "../../src/runner/types.js";
import { git, makeTempDir, removeTempDirs, writeFiles } from "../helpers/git-fixture.js";
import { runCli } from "../helpers/run-cli.js";
import { buildTask, type Built } from "./helpers.js";

/*
 * Issue 27, trap 8: a test file collected before the replay file imported the target, whose
 * import-time code ran before the replay helpers bound their comparisons. With lmr_bridge
 * that cannot happen, so there is nothing to warn about: the oracle (pytest, the replay
 * helpers, every comparison) never imports the workspace, and the code under test runs in
 * the candidate process only. Shown with a submission that, on import, rebinds the replays'
 * float comparison to "always equal" and returns wrong values: the replay tests collected
 * after a file that tries to import the target still fail it.
 */

afterAll(removeTempDirs);

const SCALE_PY = `def scale(values, factor):
    """Every value times factor."""
    return [v * factor for v in values]
`;

/** Collected first (a_ < scale): tries to import the target in the oracle, at collection time. */
const FIRST_TEST = `import importlib

try:
    importlib.import_module("scale")
    ORACLE_IMPORTED = True
except ModuleNotFoundError:
    ORACLE_IMPORTED = False


def test_the_oracle_cannot_import_the_code_under_test():
    assert not ORACLE_IMPORTED
`;

/**
 * A wrong submission that, once imported, rebinds the replays' float comparison
 * (Replayer._close) and math.isclose to "always equal", in whatever process imports it.
 */
const CHEATING_SCALE = `import math

try:
    from lmr_bridge import replay as _replay

    _replay.Replayer._close = lambda self, expected, actual: True
except ImportError:
    pass
math.isclose = lambda *args, **kwargs: True


def scale(values, factor):
    return [v * factor + 0.5 for v in values]
`;

describe("a test file collected before the replays, importing the target", () => {
  let built: Built;
  beforeAll(async () => {
    const root = await makeTempDir("import-order");
    await writeFile(join(root, "package.json"), "{}\n");
    const up = join(root, "upstreams", "scale");
    await writeFiles(up, { "scale.py": SCALE_PY });
    await git(up, "init", "-q");
    await git(up, "add", "-A");
    await git(up, "commit", "-q", "-m", "scale");
    const flags = [
      "new",
      "--yes",
      "--paper-title",
      "Scaling: A Test",
      "--paper-url",
      "https://example.org/p",
      "--year",
      "2025",
      "--repo",
      "upstreams/scale",
      "--file",
      "scale.py",
      "--symbol",
      "scale",
      "--category",
      "training objectives",
      "--author",
      "T",
      "--id",
      "scale",
    ];
    const n = await runCli(flags, { cwd: root });
    expect([0, 1], n.stderr).toContain(n.exitCode);
    const taskDir = join(root, "tasks", "scale");
    await writeFile(join(taskDir, "driver.py"), "from scale import scale\nscale([1.0, 2.5], 2.0)\nscale([0.1], -3.0)\n");
    for (const args of [
      ["record", taskDir],
      ["scaffold", "tests", taskDir],
    ]) {
      const r = await runCli(args, { cwd: root });
      expect(r.exitCode, `${args.join(" ")}: ${r.stderr}`).toBe(0);
    }
    await writeFile(join(taskDir, "tests", "test_a_imports_target.py"), FIRST_TEST);
    const m = JSON.parse(await readFile(join(taskDir, "task.json"), "utf8")) as TaskManifest;
    m.tests.files = [...m.tests.files, "tests/test_a_imports_target.py"];
    await writeFile(join(taskDir, "task.json"), JSON.stringify(m, null, 2) + "\n");
    built = await buildTask(taskDir, { LMR_APT_CACHE: "none" });
  });

  async function run(overlay: Record<string, string>): Promise<RunOutcome> {
    return runTests({
      tree: built.workspace,
      grader: built.grader,
      overlay,
      ...built.candidate,
      python: await resolvePython({}),
      timeoutTotalS: 120,
      timeoutPerTestS: 30,
    });
  }

  it("is moot with the bridge: the oracle cannot import it, and a submission's import-time patch never reaches the replays", async () => {
    const ref = await run(built.reference);
    const byName = (o: RunOutcome) => o.tests.map((t) => [t.id.split("::").pop()!.replace(/\[.*$/, ""), t.status] as const);
    // collected first, and the workspace is not there for it
    expect(byName(ref)[0]).toEqual(["test_the_oracle_cannot_import_the_code_under_test", "passed"]);
    expect(ref.tests.length).toBeGreaterThan(2);
    expect(
      ref.tests.every((t) => t.status === "passed"),
      JSON.stringify(ref.tests),
    ).toBe(true);

    const cheat = await run({ "scale.py": CHEATING_SCALE });
    const replays = cheat.tests.filter((t) => !t.id.includes("test_a_imports_target"));
    expect(replays.length).toBe(2);
    expect(
      replays.every((t) => t.status === "failed"),
      JSON.stringify(cheat.tests),
    ).toBe(true);
    expect(byName(cheat)[0]).toEqual(["test_the_oracle_cannot_import_the_code_under_test", "passed"]);
  });
});
