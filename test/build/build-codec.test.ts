import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { combineGraderHash } from "../../src/bundle/build.js";
import { hashTree } from "../../src/core/hash.js";
import type { BundleInfo } from "../../src/bundle/types.js";
import { listTree } from "../helpers/bundle-checks.js";
import { makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { copyTask } from "../helpers/task-copy.js";
import { runCli, runGrader } from "../helpers/run-cli.js";

afterAll(removeTempDirs);

const TOOLKIT_CODEC = "python/lmr_record/codec.py";
const TOOLKIT_REPLAY = "python/lmr_record/replay.py";

/** Loads a toolkit module from beside itself, as the replay tests of `lmr scaffold tests` do. */
const load = (name: string): string => `_spec = importlib.util.spec_from_file_location("${name}", Path(__file__).resolve().parent / "${name}.py")
${name.slice(4)} = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(${name.slice(4)})
`;
const loader = (check: string, modules = ["_lmr_codec"]): string => `import importlib.util
from pathlib import Path

${modules.map(load).join("")}

def test_support():
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

describe("lmr build provides the record codec and replay helper to the grader tests that load them", () => {
  it("writes the toolkit's codec and replay helper beside tests that refer to them, keeps a task's own, adds none elsewhere", async () => {
    const root = await makeTempDir("codec-task");
    const taskDir = await copyTask(root, "pref-loss", (m) => {
      m.tests.files.push(
        "tests/test_decode.py", "tests/own/test_own.py", "tests/own/_lmr_codec.py", "tests/own/_lmr_replay.py",
        "tests/replay/test_compare.py", "tests/plain/test_plain.py",
      );
    });
    for (const dir of ["own", "replay", "plain"]) await mkdir(join(taskDir, "tests", dir));
    await writeFile(join(taskDir, "tests", "test_decode.py"), loader('assert _codec.decode({"__lmr__": "tuple", "items": [1, 2]}) == (1, 2)'));
    const own = 'assert (_codec.MARK, _replay.MARK) == ("the task\'s own codec", "the task\'s own replay")';
    await writeFile(join(taskDir, "tests", "own", "test_own.py"), loader(own, ["_lmr_codec", "_lmr_replay"]));
    await writeFile(join(taskDir, "tests", "own", "_lmr_codec.py"), 'MARK = "the task\'s own codec"\n');
    await writeFile(join(taskDir, "tests", "own", "_lmr_replay.py"), 'MARK = "the task\'s own replay"\n');
    // the replay helper compares within its tolerances, and refuses what is outside them
    const compare = `matches = _replay.Replayer(_codec, _codec.Recording.__new__(_codec.Recording), rtol=1e-6, atol=1e-8).assert_matches
    matches([0.25, {"a": 1}], [0.25 + 1e-9, {"a": 1}], "call 0")
    try:
        matches(0.25, 0.3, "call 0")
    except AssertionError as e:
        assert str(e) == "call 0: expected 0.25, got 0.3"
    else:
        raise RuntimeError("0.3 matched 0.25")`;
    await writeFile(join(taskDir, "tests", "replay", "test_compare.py"), loader(compare, ["_lmr_codec", "_lmr_replay"]));
    await writeFile(join(taskDir, "tests", "plain", "test_plain.py"), "def test_plain():\n    assert True\n");

    const info = await build(taskDir, join(root, "out"));
    const grader = join(info.dir, "grader");
    expect(await listTree(grader)).toEqual([
      "fixtures/", "fixtures/preference_cases.json",
      "tests/", "tests/_lmr_codec.py",
      "tests/own/", "tests/own/_lmr_codec.py", "tests/own/_lmr_replay.py", "tests/own/test_own.py",
      "tests/plain/", "tests/plain/test_plain.py",
      "tests/replay/", "tests/replay/_lmr_codec.py", "tests/replay/_lmr_replay.py", "tests/replay/test_compare.py",
      "tests/test_decode.py", "tests/test_preference_loss.py",
    ]);
    const codec = await readFile(TOOLKIT_CODEC, "utf8");
    const replay = await readFile(TOOLKIT_REPLAY, "utf8");
    expect(await readFile(join(grader, "tests", "_lmr_codec.py"), "utf8")).toBe(codec);
    expect(await readFile(join(grader, "tests", "replay", "_lmr_codec.py"), "utf8")).toBe(codec);
    expect(await readFile(join(grader, "tests", "replay", "_lmr_replay.py"), "utf8")).toBe(replay);
    expect(await readFile(join(grader, "tests", "own", "_lmr_codec.py"), "utf8")).toBe('MARK = "the task\'s own codec"\n');
    expect(await readFile(join(grader, "tests", "own", "_lmr_replay.py"), "utf8")).toBe('MARK = "the task\'s own replay"\n');
    // the task folder itself holds no copy, and the grader hash covers the ones the bundle added
    expect(await exists(join(taskDir, "tests", "_lmr_codec.py"))).toBe(false);
    expect(await exists(join(taskDir, "tests", "replay", "_lmr_replay.py"))).toBe(false);
    const hashed = await hashTree(grader);
    expect(Object.keys(hashed.files)).toEqual(expect.arrayContaining(["tests/_lmr_codec.py", "tests/replay/_lmr_codec.py", "tests/replay/_lmr_replay.py"]));
    // pref-loss has alternatives: bundle.json's grader hash covers them too
    expect(info.hashes.grader).toBe(combineGraderHash(hashed.hash, (await hashTree(join(info.dir, "alternatives"))).hash));
    expect(info.files.grader).toBe(11);

    // the grader runs: the added codec decodes, the added helper compares, the task's own are the ones its test loads
    const run = await runGrader(join(info.dir, "workspace"), grader, { overlay: join(info.dir, "reference") });
    expect(run.exitCode, run.output).toBe(0);
    expect({ failed: run.failed, errors: run.errors }).toEqual({ failed: 0, errors: 0 });
    expect(run.passed).toBeGreaterThanOrEqual(4);
  });

  it("adds no codec or replay helper to a grader whose tests do not load them", async () => {
    const root = await makeTempDir("codec-none");
    const taskDir = await copyTask(root, "pref-loss");
    const info = await build(taskDir, join(root, "out"));
    const files = (await listTree(join(info.dir, "grader"))).filter((e) => !e.endsWith("/"));
    expect(files).toEqual(["fixtures/preference_cases.json", "tests/test_preference_loss.py"]);
  });
});
