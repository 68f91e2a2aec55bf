import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { listFiles } from "../core/hash.js";
import { removeLeftovers } from "./remove-leftovers.js";

const TARGET = "def f(x):\n    return x * 2\n";

async function tree(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "lmr-leftovers-"));
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, rel)), { recursive: true });
    await writeFile(join(dir, rel), content);
  }
  return dir;
}

describe("removeLeftovers", () => {
  it("removes VCS data, bytecode, checkpoints, target copies and source notebooks, and reports them", async () => {
    const dir = await tree({
      "pkg/model.py": "def f(x):\n    raise NotImplementedError\n",
      "pkg/model_backup.py": TARGET,
      "pkg/__pycache__/model.cpython-311.pyc": "\u0000bytecode",
      "legacy.pyc": "\u0000",
      "opt.pyo": "\u0000",
      ".git/HEAD": "ref: refs/heads/main\n",
      "vendor/lib/.git": "gitdir: ../../.git/modules/lib\n",
      "nb/.ipynb_checkpoints/demo-checkpoint.ipynb": "{}",
      "nb/demo.ipynb": "{}",
      "README.md": "readme\n",
      "same-size.py": "def g(x):\n    return x * 3\n",
    });
    const removed = await removeLeftovers(dir, {
      targets: new Map([["pkg/model.py", Buffer.from(TARGET)]]),
      preparedFrom: new Map([["nb/demo.ipynb", "pkg/model.py"]]),
    });
    expect(removed).toEqual([
      { path: ".git/", reason: "vcs" },
      { path: "legacy.pyc", reason: "bytecode" },
      { path: "nb/.ipynb_checkpoints/", reason: "notebook-checkpoint" },
      { path: "nb/demo.ipynb", reason: "prepare-source", of: "pkg/model.py" },
      { path: "opt.pyo", reason: "bytecode" },
      { path: "pkg/__pycache__/", reason: "bytecode" },
      { path: "pkg/model_backup.py", reason: "copy-of-target", of: "pkg/model.py" },
      { path: "vendor/lib/.git", reason: "vcs" },
    ]);
    expect(await listFiles(dir)).toEqual(["README.md", "pkg/model.py", "same-size.py"]);
  });

  it("keeps the target file itself even though it matches its own original", async () => {
    const dir = await tree({ "model.py": TARGET });
    const removed = await removeLeftovers(dir, { targets: new Map([["model.py", Buffer.from(TARGET)]]), preparedFrom: new Map() });
    expect(removed).toEqual([]);
    expect(await listFiles(dir)).toEqual(["model.py"]);
  });
});
