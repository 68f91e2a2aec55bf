import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findSameNamedDefinitions } from "./review-names.js";

const dirs: string[] = [];
afterAll(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

describe("findSameNamedDefinitions", () => {
  it("finds definitions sharing a target's name, and only those, whatever the spacing or nesting", async () => {
    const ws = await mkdtemp(join(tmpdir(), "lmr-review-"));
    dirs.push(ws);
    await mkdir(join(ws, "pkg", "legacy"), { recursive: true });
    await writeFile(join(ws, "pkg", "model.py"), "class Scorer:\n    def score(self, x):\n        return x\n");
    await writeFile(
      join(ws, "pkg", "legacy", "tf_model.py"),
      "import math\n\nclass   Scorer(object):\n    async  def score(self, x):\n        return math.floor(x)\n\ndef   focal_loss(p):\n    return p\n",
    );
    // names only mentioned, or prefixes of longer names, are not definitions
    await writeFile(
      join(ws, "pkg", "uses.py"),
      "from pkg.model import Scorer\nScorer().score(1)\ndef focal_loss_v2(p):\n    return p\nclass ScorerBase:\n    pass\n",
    );
    await writeFile(join(ws, "notes.txt"), "def focal_loss(p): pass\n");
    const r = await findSameNamedDefinitions(ws, [
      { file: "pkg/model.py", symbol: "Scorer.score" },
      { file: "pkg/loss.py", symbol: "focal_loss" },
    ]);
    expect(r.items.map((i) => `${i.file}:${i.line} ${i.name}`).sort()).toEqual([
      "pkg/legacy/tf_model.py:3 Scorer",
      "pkg/legacy/tf_model.py:4 Scorer.score",
      "pkg/legacy/tf_model.py:7 focal_loss",
    ]);
  });
});
