import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LmrError } from "../core/errors.js";
import { checkCompiles, formatCompileError } from "./check-compile.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "lmr-compile-"));
  await writeFile(join(dir, "good.py"), "def f():\n    return 1\n");
  await writeFile(join(dir, "bad.py"), "def f():\nreturn 1\n");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("checkCompiles", () => {
  it("compiles files and sources in one process and reports each", async () => {
    const out = await checkCompiles([
      join(dir, "good.py"),
      join(dir, "bad.py"),
      { name: "mem.py", source: "x = (1,\n" },
      { name: "tabs.py", source: "if 1:\n\tx = 1\n        y = 2\n" },
      { name: "nonlocal.py", source: "def f():\n    nonlocal q\n" },
      { name: "ok.py", source: "print('é')\n" },
      join(dir, "missing.py"),
    ]);
    expect(out.map((o) => [o.ok, o.error?.type])).toEqual([
      [true, undefined],
      [false, "IndentationError"],
      [false, "SyntaxError"],
      [false, "TabError"],
      [false, "SyntaxError"],
      [true, undefined],
      [false, "FileNotFoundError"],
    ]);
    expect(out[1]!.error?.line).toBe(2);
    expect(formatCompileError(out[1]!)).toMatch(/bad\.py:2:\d+: IndentationError: /);
  });

  it("fails as infrastructure when the interpreter is missing", async () => {
    await expect(checkCompiles([{ name: "a.py", source: "" }], "/nonexistent/python3")).rejects.toSatisfy(
      (err: unknown) => err instanceof LmrError && err.kind === "infra" && err.code === "mask/python-unavailable",
    );
  });
});
