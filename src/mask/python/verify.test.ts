import { describe, expect, it } from "vitest";
import { LmrError } from "../../core/errors.js";
import { getPythonParser } from "../../lang/python-parser.js";
import { applyEdits, type TextEdit } from "../apply-edits.js";
import { indexDefinitions } from "./symbols.js";
import { verifyMasked, type VerifyMode } from "./verify.js";

const source = [
  "import os",
  "class A:",
  "    def m(self):",
  "        return 1",
  "",
  "    def n(self):",
  "        return 2",
  "def f():",
  "    return 3",
  "",
].join("\n");

/** An edit replacing the body of `symbol` with `text`, as the masker would plan it. */
async function editBody(symbol: string, text: string): Promise<{ edit: TextEdit; masked: string }> {
  const parser = await getPythonParser();
  const tree = parser.parse(source)!;
  const def = indexDefinitions(tree.rootNode).byName.get(symbol)![0]!;
  const body = def.node.childForFieldName("body")!;
  const edit: TextEdit = {
    start: body.startIndex,
    end: body.endIndex,
    startPoint: body.startPosition,
    endPoint: body.endPosition,
    text,
    owner: 0,
    container: { start: def.outer.startIndex, end: def.outer.endIndex, row: def.outer.startPosition.row },
  };
  return { edit, masked: applyEdits(source, [edit]) };
}

async function verify(mode: VerifyMode, edits: TextEdit[], masked: string): Promise<LmrError | undefined> {
  const parser = await getPythonParser();
  const tree = parser.parse(source)!;
  try {
    verifyMasked(parser, tree, masked, edits, mode, "x.py");
    return undefined;
  } catch (err) {
    if (err instanceof LmrError) return err;
    throw err;
  } finally {
    tree.delete();
  }
}

describe("verifyMasked", () => {
  it("accepts a well-formed result in both modes", async () => {
    const { edit, masked } = await editBody("A.n", "raise NotImplementedError");
    expect(await verify("changed", [edit], masked)).toBeUndefined();
    expect(await verify("full", [edit], masked)).toBeUndefined();
  });

  it("finds a broken method body, with the line of the result, in both modes", async () => {
    const { edit, masked } = await editBody("A.n", "raise (NotImplementedError\n        x = 1");
    for (const mode of ["changed", "full"] as const) {
      const err = await verify(mode, [edit], masked);
      expect(err?.code).toBe("mask/parse-error");
      expect(err?.kind).toBe("check");
      expect(Number(err?.pointer?.replace("line ", ""))).toBeGreaterThanOrEqual(6);
    }
  });

  it("finds a broken body after an earlier edit shifted it", async () => {
    const first = await editBody("A.m", "x = 1\n        y = 2\n        z = 3");
    const second = await editBody("f", "return (3");
    const edits = [first.edit, { ...second.edit, owner: 1 }];
    const masked = applyEdits(source, edits);
    for (const mode of ["changed", "full"] as const) {
      const err = await verify(mode, edits, masked);
      expect(err?.code, mode).toBe("mask/parse-error");
    }
    expect(await verify("none", edits, masked)).toBeUndefined();
    // the same shift with a valid body: a misplaced piece would not parse
    const fine = await editBody("f", "return 33");
    const okEdits = [first.edit, { ...fine.edit, owner: 1 }];
    expect(await verify("changed", okEdits, applyEdits(source, okEdits))).toBeUndefined();
  });
});
