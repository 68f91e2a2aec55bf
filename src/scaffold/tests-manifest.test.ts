import { describe, expect, it } from "vitest";
import { editManifestLists } from "./tests-manifest.js";

const compact = `{
  "id": "t",
  "tests": {
    "files": ["tests/test_a.py"],
    "fixtures": ["fixtures/a.json"],
    "timeout_per_test_s": 30
  },
  "targets": [
    { "file": "m.py", "symbol": "f", "mode": "body" }
  ]
}
`;

describe("editManifestLists", () => {
  it("appends to inline arrays and leaves every other byte alone", () => {
    const out = editManifestLists(compact, [
      { path: ["tests", "files"], add: ["tests/test_b.py", "tests/_c.py"] },
      { path: ["tests", "fixtures"], add: ["fixtures/calls.json"] },
    ]);
    expect(out).toBe(
      compact
        .replace(`["tests/test_a.py"]`, `["tests/test_a.py", "tests/test_b.py", "tests/_c.py"]`)
        .replace(`["fixtures/a.json"]`, `["fixtures/a.json", "fixtures/calls.json"]`),
    );
  });

  it("appends to one-item-per-line arrays in their indentation", () => {
    const text = `{\n  "tests": {\n    "files": [\n      "tests/test_a.py"\n    ]\n  }\n}\n`;
    const out = editManifestLists(text, [{ path: ["tests", "files"], add: ["tests/test_b.py"] }]);
    expect(out).toBe(`{\n  "tests": {\n    "files": [\n      "tests/test_a.py",\n      "tests/test_b.py"\n    ]\n  }\n}\n`);
  });

  it("adds a missing list right after tests.files, indented like it", () => {
    const text = compact.replace(`    "fixtures": ["fixtures/a.json"],\n`, "");
    const out = editManifestLists(text, [{ path: ["tests", "fixtures"], add: ["fixtures/calls.json", "fixtures/calls.npz"] }]);
    expect(out).toBe(compact.replace(`["fixtures/a.json"]`, `["fixtures/calls.json", "fixtures/calls.npz"]`));
    expect(JSON.parse(out).tests.fixtures).toEqual(["fixtures/calls.json", "fixtures/calls.npz"]);
  });

  it("adds to a one-line object with ', '", () => {
    const text = `{"tests": {"files": ["a.py"], "timeout_total_s": 1}}`;
    expect(editManifestLists(text, [{ path: ["tests", "fixtures"], add: ["f.json"] }])).toBe(
      `{"tests": {"files": ["a.py"], "fixtures": ["f.json"], "timeout_total_s": 1}}`,
    );
  });

  it("does nothing when the items are already listed", () => {
    expect(editManifestLists(compact, [{ path: ["tests", "files"], add: ["tests/test_a.py"] }])).toBe(compact);
  });

  it("removes items wherever they are, inline or one per line", () => {
    const inline = compact.replace(`["fixtures/a.json"]`, `["x.npz", "fixtures/a.json", "y.npz"]`);
    expect(editManifestLists(inline, [{ path: ["tests", "fixtures"], remove: ["x.npz", "y.npz"] }])).toBe(compact);
    const lines = `{"l": [\n  "a",\n  "b",\n  "c"\n]}`;
    expect(editManifestLists(lines, [{ path: ["l"], remove: ["a", "c"] }])).toBe(`{"l": [\n  "b"\n]}`);
    expect(editManifestLists(`{"l": ["a"]}`, [{ path: ["l"], remove: ["a"] }])).toBe(`{"l": []}`);
  });

  it("removes and adds in one edit", () => {
    const out = editManifestLists(`{"l": ["old", "keep"]}`, [{ path: ["l"], remove: ["old"], add: ["new"] }]);
    expect(out).toBe(`{"l": ["keep", "new"]}`);
  });

  it("keeps escaped strings intact", () => {
    const text = `{"tests": {"files": ["a \\"quoted\\" \\u00e9.py"]}}`;
    const out = editManifestLists(text, [{ path: ["tests", "files"], add: ["b.py"] }]);
    expect(JSON.parse(out).tests.files).toEqual(['a "quoted" é.py', "b.py"]);
    expect(out.startsWith(`{"tests": {"files": ["a \\"quoted\\" \\u00e9.py", "b.py"]`)).toBe(true);
  });
});
