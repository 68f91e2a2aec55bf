import { mkdir, mkdtemp, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { findReferenceCopies, isTrivialLine, normaliseLine } from "./reference-copies.js";

const BODY = [
  "    n = check_same_length(a, b)",
  "    total = 0.0",
  "    for i in range(n):",
  "        margin = a[i] - b[i]",
  "        total += max(0.0, 1.0 - margin)",
  "    return total / n",
].join("\n");
const REF = [{ target: "loss.py::hinge", text: BODY }];

async function workspace(files: Record<string, string | Buffer>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "lmr-copies-"));
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, rel)), { recursive: true });
    await writeFile(join(dir, rel), content);
  }
  return dir;
}

describe("normaliseLine / isTrivialLine", () => {
  it("collapses whitespace and trims", () => {
    expect(normaliseLine("\t  total  +=   max(0.0,\t1.0)  ")).toBe("total += max(0.0, 1.0)");
  });

  it("treats brackets, pass, bare returns, comments and the stub as trivial", () => {
    for (const line of ["", ")", "]),", "pass", "else:", "return x", "return self.value", "# note", '"""', "raise NotImplementedError"]) {
      expect(isTrivialLine(normaliseLine(line)), line).toBe(true);
    }
    for (const line of ["total = 0.0", "return total / n", "for i in range(n):", "raise ValueError('bad')"]) {
      expect(isTrivialLine(normaliseLine(line)), line).toBe(false);
    }
  });
});

describe("findReferenceCopies", () => {
  it("finds a re-indented copy and reports its lines", async () => {
    const copy = ["class Old:", "    def hinge(self, a, b):", ...BODY.split("\n").map((l) => `    ${l}`), ""].join("\n");
    const dir = await workspace({ "old/loss_v0.py": copy, "loss.py": "def hinge(a, b):\n    raise NotImplementedError\n" });
    expect(await findReferenceCopies(dir, REF)).toEqual([{ file: "old/loss_v0.py", target: "loss.py::hinge", start_line: 3, end_line: 8, lines: 6 }]);
  });

  it("ignores blank lines and comments between copied lines", async () => {
    const copy = "n = check_same_length(a, b)\n\n# start\ntotal = 0.0\n\nfor i in range(n):\n";
    const dir = await workspace({ "notes.py": copy });
    expect(await findReferenceCopies(dir, REF)).toMatchObject([{ file: "notes.py", start_line: 1, end_line: 6, lines: 3 }]);
  });

  it("does not flag fewer than three consecutive lines, or lines out of order", async () => {
    const dir = await workspace({
      "two.py": "total = 0.0\nfor i in range(n):\nprint('x')\nmargin = a[i] - b[i]\n",
      "shuffled.py": "for i in range(n):\ntotal = 0.0\nn = check_same_length(a, b)\n",
    });
    expect(await findReferenceCopies(dir, REF)).toEqual([]);
  });

  it("reads notebooks cell by cell", async () => {
    const nb = { cells: [{ cell_type: "markdown", source: ["# title"] }, { cell_type: "code", source: BODY.split("\n").map((l, i, all) => (i < all.length - 1 ? `${l}\n` : l)) }] };
    const dir = await workspace({ ".ipynb_checkpoints/demo-checkpoint.ipynb": JSON.stringify(nb, null, 1) });
    expect(await findReferenceCopies(dir, REF)).toEqual([
      { file: ".ipynb_checkpoints/demo-checkpoint.ipynb", target: "loss.py::hinge", start_line: 1, end_line: 6, lines: 6, cell: 1 },
    ]);
  });

  it("reports two separate copies in one file as two findings", async () => {
    const block = BODY.split("\n").slice(0, 3).join("\n");
    const dir = await workspace({ "twice.py": `${block}\nprint('between')\n${block}\n` });
    const found = await findReferenceCopies(dir, REF);
    expect(found.map((f) => [f.start_line, f.end_line])).toEqual([
      [1, 3],
      [5, 7],
    ]);
  });

  it("matches a two-line reference in full, and skips one-line references", async () => {
    const refs = [
      { target: "a.py::short", text: "    x = compute_alpha(y)\n    return normalise(x, axis=1)\n" },
      { target: "a.py::tiny", text: "    return weights.sum() / count\n" },
    ];
    const dir = await workspace({ "b.py": "x = compute_alpha(y)\nreturn normalise(x, axis=1)\nreturn weights.sum() / count\n" });
    expect((await findReferenceCopies(dir, refs)).map((f) => f.target)).toEqual(["a.py::short"]);
  });

  it("skips binary files and does not follow symlinks", async () => {
    const outside = await workspace({ "secret.py": BODY });
    const dir = await workspace({ "blob.bin": Buffer.concat([Buffer.from([0, 1, 2]), Buffer.from(BODY)]) });
    await symlink(join(outside, "secret.py"), join(dir, "link.py"));
    expect(await findReferenceCopies(dir, REF)).toEqual([]);
  });
});
