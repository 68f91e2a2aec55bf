import { describe, expect, it } from "vitest";
import { stripPythonProse } from "./workspace-strip.js";

const lines = (...l: string[]): string => l.join("\n") + "\n";

describe("stripPythonProse", () => {
  const source = lines(
    "#!/usr/bin/env python",
    "# -*- coding: utf-8 -*-",
    '"""Module doc: the score is Q + c * P * sqrt(N) / (1 + n)."""',
    "import math  # the square root",
    "",
    "class Tree:",
    '    """Holds Q, P and N.',
    "",
    '    The score is Q + c * P * sqrt(N) / (1 + n)."""',
    "",
    "    def __init__(self, c):",
    "        # score = Q + c * P * sqrt(N) / (1 + n)",
    "        self.c = c  # exploration constant",
    "        s = '# not a comment'",
    "",
    "    def doc_only(self):",
    '        """Only a docstring."""',
    "",
    "    def masked(self):",
    '        """Pick the best action."""',
    "        # TODO: implement Tree.masked",
    "        raise NotImplementedError",
    "",
    "def other():",
    '    """Untouched when a symbol is named."""',
    "    return 1  # keep",
  );

  it("strips one symbol's comments and docstrings, keeps every line number, the masker's TODO and the code", async () => {
    const r = await stripPythonProse(source, "Tree");
    const out = r.source.split("\n");
    expect(out).toHaveLength(source.split("\n").length);
    expect(out.slice(5, 22).join("\n")).not.toMatch(/sqrt|exploration|Holds|Only a docstring|Pick the best/);
    expect(r.source).toContain("# TODO: implement Tree.masked");
    expect(r.source).toContain("s = '# not a comment'");
    expect(out[12]).toBe("        self.c = c");
    expect(out[11]).toBe("");
    // a block whose only statement was its docstring keeps a statement
    expect(out[16]).toBe("        pass");
    // outside the symbol nothing changes
    expect(out.slice(0, 4)).toEqual(source.split("\n").slice(0, 4));
    expect(r.source).toContain('"""Untouched when a symbol is named."""');
    expect(r.source).toContain("return 1  # keep");
    expect(r.comments).toBe(2);
    expect(r.docstrings).toBe(3);
  });

  it("strips a whole file but keeps the shebang and the encoding line", async () => {
    const r = await stripPythonProse(source, undefined);
    expect(r.source.startsWith("#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n\nimport math\n")).toBe(true);
    expect(r.source).not.toMatch(/Untouched|# keep|# the square root/);
    expect(r.source).toContain("# TODO: implement Tree.masked");
    expect(r.docstrings).toBe(5);
  });

  it("names a symbol that is not there", async () => {
    await expect(stripPythonProse(source, "Nope", "core/mcts.py")).rejects.toMatchObject({ code: "mask/symbol-not-found" });
  });
});
