import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findInRecording, formatLowPrecisionWarning } from "../../src/record/low-precision.js";
import type { CallsFile } from "../../src/record/calls.js";
import { git, makeTempDir, removeTempDirs, writeFiles } from "../helpers/git-fixture.js";
import { runCli, jsonData } from "../helpers/run-cli.js";
import { pythonWith } from "./helpers.js";

/*
 * Issue 27, trap 2: the upstream's code was written for bfloat16 (a Newton–Schulz iteration);
 * two correct solutions differ by 7 % on small entries and replays cannot tell right from
 * wrong, and nothing warned. Our own upstream: the same step in pure Python, once rounding
 * to bfloat16 as such code does, once in full precision; and a torch target fed bfloat16.
 */

afterAll(removeTempDirs);

const STEP_PY = `import struct


def to_bf16(x):
    """The float nearest to x that bfloat16 holds (the top 16 bits of a float32)."""
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def ns_scale(values, steps=3, dtype="bfloat16"):
    """A Newton-Schulz-like scalar iteration towards 1 / sqrt(mean square)."""
    ms = sum(v * v for v in values) / len(values)
    y = 1.0 / (ms + 1e-7)
    for _ in range(steps):
        y = y * (1.5 - 0.5 * ms * y * y)
        if dtype == "bfloat16":
            y = to_bf16(y)
    return [v * y for v in values]


def plain_scale(values, steps=3):
    ms = sum(v * v for v in values) / len(values)
    y = 1.0 / (ms + 1e-7)
    for _ in range(steps):
        y = y * (1.5 - 0.5 * ms * y * y)
    return [v * y for v in values]
`;

const TORCH_PY = `def add_one(x):
    return x + 1
`;

async function makeUpstreamProject(): Promise<{ root: string; commit: string }> {
  const root = await makeTempDir("lowprec");
  await writeFile(join(root, "package.json"), "{}\n");
  const up = join(root, "upstreams", "steps");
  await writeFiles(up, { "step.py": STEP_PY, "tstep.py": TORCH_PY });
  await git(up, "init", "-q");
  await git(up, "add", "-A");
  await git(up, "commit", "-q", "-m", "steps");
  return { root, commit: await git(up, "rev-parse", "HEAD") };
}

async function newTask(root: string, commit: string, id: string, file: string, symbol: string, driver: string): Promise<string> {
  const flags = [
    "new",
    "--yes",
    "--paper-title",
    "A Step in Low Precision",
    "--paper-url",
    "https://example.org/paper",
    "--year",
    "2025",
    "--repo",
    "upstreams/steps",
    "--commit",
    commit,
    "--file",
    file,
    "--symbol",
    symbol,
    "--category",
    "training objectives",
    "--author",
    "T",
    "--id",
    id,
  ];
  const r = await runCli(flags, { cwd: root });
  expect([0, 1], r.stderr).toContain(r.exitCode);
  const dir = join(root, "tasks", id);
  await writeFile(join(dir, "driver.py"), driver);
  return dir;
}

describe("lmr record warns when the reference's path runs in low precision", () => {
  let root: string;
  let commit: string;
  beforeAll(async () => {
    ({ root, commit } = await makeUpstreamProject());
  });

  it("finds bfloat16 on the target's own lines, and stays quiet for a full-precision target", async () => {
    const low = await newTask(
      root,
      commit,
      "ns-low",
      "step.py",
      "ns_scale",
      "from step import ns_scale\nns_scale([0.5, -1.25, 2.0])\nns_scale([3.0, 0.001], steps=5)\n",
    );
    const r = await runCli(["record", low, "--json"], { cwd: root });
    expect(r.exitCode, r.stderr).toBe(0);
    const result = jsonData(r.stdout) as { low_precision: { dtype: string; where: string; from: string }[] };
    expect(result.low_precision).toEqual([
      { dtype: "bfloat16", where: 'step.py:11: def ns_scale(values, steps=3, dtype="bfloat16"):', from: "source" },
      { dtype: "bfloat16", where: 'step.py:17: if dtype == "bfloat16":', from: "source" },
    ]);
    const text = await runCli(["record", low], { cwd: root });
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stderr).toContain(
      'warning: the reference\'s path runs in bfloat16 (step.py:11: def ns_scale(values, steps=3, dtype="bfloat16"):; step.py:17: if dtype == "bfloat16":): two correct solutions can differ by several per cent',
    );
    expect(text.stderr).toContain('CONTRIBUTING.md, "Low-precision code"');

    const plain = await newTask(root, commit, "ns-plain", "step.py", "plain_scale", "from step import plain_scale\nplain_scale([0.5, -1.25, 2.0])\n");
    const q = await runCli(["record", plain], { cwd: root });
    expect(q.exitCode, q.stderr).toBe(0);
    expect(q.stderr).not.toContain("low precision");
    expect(q.stderr).not.toContain("bfloat16");
  });

  it("reads the dtypes a recording holds (the codec's tensor, ndarray and dtype nodes)", () => {
    const calls = {
      targets: [
        {
          symbol: "Muon.step",
          calls: [
            { index: 0, args: [{ __lmr__: "tensor", dtype: "float32", shape: [2], key: "a0" }], kwargs: {}, result: null },
            {
              index: 1,
              args: [],
              kwargs: { dtype: { __lmr__: "torch_dtype", name: "bfloat16" } },
              result: { __lmr__: "tensor", dtype: "bfloat16", shape: [2], key: "a1" },
            },
            { index: 2, args: [{ __lmr__: "ndarray", dtype: "float16", shape: [3], key: "a2" }], kwargs: {} },
          ],
        },
      ],
    } as unknown as CallsFile;
    const found = findInRecording(calls);
    expect(found).toEqual([
      { dtype: "bfloat16", where: "Muon.step call 1, kwargs.dtype", from: "recording" },
      { dtype: "float16", where: "Muon.step call 2, args[0]", from: "recording" },
    ]);
    expect(formatLowPrecisionWarning(found)).toMatch(
      /^the reference's path runs in bfloat16 and float16 \(Muon\.step call 1, kwargs\.dtype; Muon\.step call 2, args\[0\]\)/,
    );
    expect(formatLowPrecisionWarning([])).toBeUndefined();
  });
});

const torchPython = await pythonWith(["torch"]);

describe.skipIf(!torchPython)("with torch: bfloat16 tensors in the recording", () => {
  it("warns for a target fed bfloat16 whose source names no dtype", async () => {
    const { root, commit } = await makeUpstreamProject();
    const dir = await newTask(
      root,
      commit,
      "add-one",
      "tstep.py",
      "add_one",
      "import torch\nfrom tstep import add_one\nadd_one(torch.ones(3))\nadd_one(torch.ones(2, dtype=torch.bfloat16))\n",
    );
    const r = await runCli(["record", dir, "--json"], { cwd: root, env: { LMR_PYTHON: torchPython! } });
    expect(r.exitCode, r.stderr).toBe(0);
    const result = jsonData(r.stdout) as { low_precision: unknown[] };
    expect(result.low_precision).toEqual([{ dtype: "bfloat16", where: "add_one call 1, args[0]", from: "recording" }]);
    const calls = JSON.parse(await readFile(join(dir, "fixtures", "calls.json"), "utf8")) as CallsFile;
    expect(findInRecording(calls)).toEqual(result.low_precision);
  });
});
