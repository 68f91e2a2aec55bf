import { describe, expect, it } from "vitest";
import { LmrError } from "../core/errors.js";
import { parseBodies, spliceBodies } from "./alternative-bodies.js";

const lines = (...ls: string[]): string => ls.join("\n") + "\n";

const MASKED = lines(
  "import math",
  "",
  "def f(x):",
  '    """Square."""',
  "    # TODO: implement f",
  "    raise NotImplementedError",
  "",
  "class A:",
  "    def m(self):",
  "        # TODO: implement A.m",
  "        raise NotImplementedError",
  "",
  "def other():",
  "    # TODO: implement other",
  "    raise NotImplementedError",
);

const BODIES = lines(
  "# Alternative 'loops'.",
  "",
  "# lmr-body: mod.py::f",
  "    return x * x",
  "",
  "# lmr-body: mod.py::A.m",
  "        total = 0",
  "",
  "        return total",
  "",
);

const isTarget = (name: string): boolean => name === "f" || name.startsWith("A.");

function errorOf(fn: () => unknown): LmrError {
  try {
    fn();
  } catch (err) {
    if (err instanceof LmrError) return err;
    throw err;
  }
  throw new Error("expected an LmrError");
}

describe("alternative bodies", () => {
  it("parses one block per marker, keeping inner blank lines and dropping trailing ones", () => {
    const blocks = parseBodies(BODIES, "alternatives/loops/bodies.py");
    expect(blocks.map((b) => [b.file, b.symbol, b.line, b.lines])).toEqual([
      ["mod.py", "f", 3, ["    return x * x"]],
      ["mod.py", "A.m", 6, ["        total = 0", "", "        return total"]],
    ]);
  });

  it("splices each body in place of its stub; a stub masked for another reason stays", () => {
    const out = spliceBodies(MASKED, parseBodies(BODIES, "b"), "mod.py", "b", isTarget);
    expect(out).toBe(
      MASKED.replace("    # TODO: implement f\n    raise NotImplementedError\n", "    return x * x\n").replace(
        "        # TODO: implement A.m\n        raise NotImplementedError\n",
        "        total = 0\n\n        return total\n",
      ),
    );
    expect(out).toContain("# TODO: implement other");
  });

  it("keeps CRLF line endings", () => {
    const crlf = MASKED.replace(/\n/g, "\r\n");
    const out = spliceBodies(crlf, parseBodies(BODIES, "b"), "mod.py", "b", isTarget);
    expect(out.split("\r\n").length).toBe(out.split("\n").length);
    expect(out).toContain("    return x * x\r\n");
  });

  it("names the file and line of what is wrong", () => {
    expect(errorOf(() => parseBodies("# just notes\n", "alternatives/x/bodies.py")).message).toMatch(/no '# lmr-body: FILE::SYMBOL' marker/);
    expect(errorOf(() => parseBodies(lines("# lmr-body: mod.py::f", "", "# lmr-body: mod.py::g", "    pass"), "b")).message).toBe(
      "line 1: the block for mod.py::f is empty",
    );
    expect(errorOf(() => parseBodies(lines("# lmr-body: mod.py::f", "    pass", "# lmr-body: mod.py::f", "    pass"), "b")).message).toBe(
      "line 3: a second block for mod.py::f",
    );
    const noStub = errorOf(() => spliceBodies(MASKED, parseBodies(lines("# lmr-body: mod.py::g", "    pass"), "b"), "mod.py", "b", isTarget));
    expect(noStub.message).toBe("line 1: mod.py has no masked stub for g");
    const missing = errorOf(() =>
      spliceBodies(
        MASKED,
        parseBodies(lines("# lmr-body: mod.py::f", "    return 1"), "alternatives/x/bodies.py"),
        "mod.py",
        "alternatives/x/bodies.py",
        isTarget,
      ),
    );
    expect(missing.file).toBe("alternatives/x/bodies.py");
    expect(missing.message).toMatch(/no body for mod.py::A.m/);
  });
});
