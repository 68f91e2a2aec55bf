import { mkdir, mkdtemp, readFile, readlink, rm, symlink, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listFiles } from "../core/hash.js";
import { isHijackFile, prepareScratch, removeScratch } from "./scratch.js";

let base: string;
let tree: string;
let grader: string;
let outside: string;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "lmr-scratch-test-"));
  tree = join(base, "tree");
  grader = join(base, "grader");
  outside = join(base, "outside");
  for (const d of [join(tree, "pkg", "__pycache__"), join(tree, ".git"), join(tree, "lmr_tests"), join(grader, "tests"), outside])
    await mkdir(d, { recursive: true });
  const files: Record<string, string> = {
    "tree/pkg/mod.py": "x = 1\n",
    "tree/pkg/conftest.py": "boom\n",
    "tree/pkg/__pycache__/mod.cpython-311.pyc": "pyc",
    "tree/stale.pyc": "pyc",
    "tree/.git/HEAD": "ref\n",
    "tree/sitecustomize.py": "boom\n",
    "tree/x.pth": "import os\n",
    "tree/pyproject.toml": "[project]\nname='x'\n",
    "tree/lmr_tests/test_forged.py": "def test_x(): pass\n",
    "grader/tests/test_a.py": "def test_a(): pass\n",
    "grader/tests/conftest.py": "# grader conftest stays\n",
  };
  for (const [p, c] of Object.entries(files)) await writeFile(join(base, p), c);
  await symlink("pkg/mod.py", join(tree, "link.py"));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe("prepareScratch", () => {
  it("copies the tree without junk or hijack files, the grader apart from it, and the candidate's files", async () => {
    const s = await prepareScratch(tree, grader, "lmr_tests", {}, tmpdir(), { candidateFiles: ["tests/conftest.py"] });
    try {
      // the tree's own lmr_tests/ stays the tree's: the grader is never inside the candidate's tree
      expect(await listFiles(s.root)).toEqual(["link.py", "lmr_tests/test_forged.py", "pkg/mod.py", "pyproject.toml"]);
      expect(s.removed).toEqual(["pkg/conftest.py", "sitecustomize.py", "x.pth"]);
      expect(await readlink(join(s.root, "link.py"))).toBe("pkg/mod.py");
      expect(await listFiles(s.oracleRoot)).toEqual(["lmr_tests/tests/conftest.py", "lmr_tests/tests/test_a.py"]);
      expect(s.mountDir).toBe(join(s.oracleRoot, "lmr_tests"));
      expect(await listFiles(s.support)).toEqual(["conftest.py"]);
      expect(existsSync(s.home) && existsSync(s.tmp) && existsSync(s.bridge) && existsSync(s.oracleHome)).toBe(true);
      expect(s.treeBytes).toBeGreaterThan(0);
      // the socket's folder is short wherever the scratch is, and private to this process
      expect(join(s.bridge, "candidate.sock").length).toBeLessThan(100);
      expect(s.bridge.startsWith(s.dir)).toBe(false);
    } finally {
      await removeScratch(s);
    }
    expect(existsSync(s.dir) || existsSync(s.bridge)).toBe(false);
  });

  it("writes an overlay file only where no symlink leads elsewhere", async () => {
    await symlink(outside, join(tree, "elsewhere"));
    try {
      await expect(prepareScratch(tree, grader, "lmr_tests", { "elsewhere/mod.py": "x = 2\n" })).rejects.toMatchObject({ code: "run/symlink-path" });
      expect(await listFiles(outside)).toEqual([]);
      const s = await prepareScratch(tree, grader, "lmr_tests", { "pkg/mod.py": "x = 3\n" });
      expect(await readFile(join(s.root, "pkg", "mod.py"), "utf8")).toBe("x = 3\n");
      await removeScratch(s);
    } finally {
      await rm(join(tree, "elsewhere"));
    }
  });

  it("rejects an unsafe mount and missing folders", async () => {
    await expect(prepareScratch(tree, grader, "../up")).rejects.toMatchObject({ code: "run/bad-mount" });
    await expect(prepareScratch(join(base, "nope"), grader, "lmr_tests")).rejects.toMatchObject({ code: "run/no-dir" });
  });

  it("knows the hijack file names", () => {
    for (const n of ["conftest.py", "pytest.ini", ".pytest.ini", "sitecustomize.py", "usercustomize.py", "a.pth"]) expect(isHijackFile(n)).toBe(true);
    for (const n of ["pyproject.toml", "setup.cfg", "tox.ini", "conftest_utils.py"]) expect(isHijackFile(n)).toBe(false);
  });
});
