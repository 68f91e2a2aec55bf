import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hashTree } from "../../src/core/hash.js";
import type { BundleInfo } from "../../src/bundle/types.js";
import { listTree } from "../helpers/bundle-checks.js";
import { makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { copyTask } from "../helpers/task-copy.js";
import { runCli, runGrader } from "../helpers/run-cli.js";

afterAll(removeTempDirs);

const TOOLKIT_CODEC = "python/lmr_record/codec.py";

/** Loads the codec from beside itself, as the replay tests of `lmr scaffold tests` do. */
const loader = (check: string): string => `import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("_lmr_codec", Path(__file__).resolve().parent / "_lmr_codec.py")
_codec = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_codec)


def test_codec():
    ${check}
`;

async function exists(p: string): Promise<boolean> {
  return stat(p).then(() => true, () => false);
}

async function build(taskDir: string, out: string): Promise<BundleInfo> {
  const r = await runCli(["build", taskDir, "--out", out, "--json"]);
  expect(r.exitCode, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as BundleInfo[])[0]!;
}

describe("lmr build provides the record codec to the grader tests that load it", () => {
  it("writes the toolkit's codec beside tests that refer to it, keeps a task's own, adds none elsewhere", async () => {
    const root = await makeTempDir("codec-task");
    const taskDir = await copyTask(root, "pref-loss", (m) => {
      m.tests.files.push("tests/test_decode.py", "tests/own/test_own.py", "tests/own/_lmr_codec.py", "tests/plain/test_plain.py");
    });
    await mkdir(join(taskDir, "tests", "own"));
    await mkdir(join(taskDir, "tests", "plain"));
    await writeFile(join(taskDir, "tests", "test_decode.py"), loader('assert _codec.decode({"__lmr__": "tuple", "items": [1, 2]}) == (1, 2)'));
    await writeFile(join(taskDir, "tests", "own", "test_own.py"), loader('assert _codec.MARK == "the task\'s own"'));
    await writeFile(join(taskDir, "tests", "own", "_lmr_codec.py"), 'MARK = "the task\'s own"\n');
    await writeFile(join(taskDir, "tests", "plain", "test_plain.py"), "def test_plain():\n    assert True\n");

    const info = await build(taskDir, join(root, "out"));
    const grader = join(info.dir, "grader");
    expect(await listTree(grader)).toEqual([
      "fixtures/", "fixtures/preference_cases.json",
      "tests/", "tests/_lmr_codec.py",
      "tests/own/", "tests/own/_lmr_codec.py", "tests/own/test_own.py",
      "tests/plain/", "tests/plain/test_plain.py",
      "tests/test_decode.py", "tests/test_preference_loss.py",
    ]);
    expect(await readFile(join(grader, "tests", "_lmr_codec.py"), "utf8")).toBe(await readFile(TOOLKIT_CODEC, "utf8"));
    expect(await readFile(join(grader, "tests", "own", "_lmr_codec.py"), "utf8")).toBe('MARK = "the task\'s own"\n');
    // the task folder itself holds no copy, and the grader hash covers the one the bundle added
    expect(await exists(join(taskDir, "tests", "_lmr_codec.py"))).toBe(false);
    const hashed = await hashTree(grader);
    expect(Object.keys(hashed.files)).toContain("tests/_lmr_codec.py");
    expect(info.hashes.grader).toBe(hashed.hash);
    expect(info.files.grader).toBe(7);

    // the grader runs: the added codec decodes, the task's own is the one its test loads
    const run = await runGrader(join(info.dir, "workspace"), grader, { overlay: join(info.dir, "reference") });
    expect(run.exitCode, run.output).toBe(0);
    expect({ failed: run.failed, errors: run.errors }).toEqual({ failed: 0, errors: 0 });
    expect(run.passed).toBeGreaterThanOrEqual(3);
  });

  it("adds no codec to a grader whose tests do not load it", async () => {
    const root = await makeTempDir("codec-none");
    const taskDir = await copyTask(root, "pref-loss");
    const info = await build(taskDir, join(root, "out"));
    const files = (await listTree(join(info.dir, "grader"))).filter((e) => !e.endsWith("/"));
    expect(files).toEqual(["fixtures/preference_cases.json", "tests/test_preference_loss.py"]);
  });
});
