import { describe, expect, it } from "vitest";
import { checkRelativePath } from "../../src/core/paths.js";

describe("checkRelativePath", () => {
  it.each(["instruction.md", "tests/test_loss.py", "./tests/test_loss.py", "a/b/c.d", ".hidden/x", "dir.with..dots/x", "..foo/bar"])("accepts %j", (p) => {
    expect(checkRelativePath(p)).toBeUndefined();
  });

  it.each([
    ["", "path is empty"],
    ["/etc/passwd", "path is absolute"],
    ["C:\\tasks\\x.py", "path is absolute"],
    ["C:/tasks/x.py", "path is absolute"],
    ["tests\\test_x.py", "path uses backslashes; use '/'"],
    ["..", "path contains '..'"],
    ["../x.py", "path contains '..'"],
    ["tests/../../x.py", "path contains '..'"],
    ["tests/..", "path contains '..'"],
    ["tests//x.py", "path has an empty segment"],
    ["tests/", "path has an empty segment"],
  ])("rejects %j: %s", (p, why) => {
    expect(checkRelativePath(p)).toBe(why);
  });
});
