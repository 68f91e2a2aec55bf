import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { EXAMPLE_MANIFEST } from "./example.js";
import type { RawManifest } from "./read.js";
import { checkManifest } from "./validate.js";

// Field-level checks run against the valid-minimal fixture folder, so only the edited field can fire.
const dir = resolve("test/fixtures/manifests/valid-minimal");
const base = JSON.parse(readFileSync(`${dir}/task.json`, "utf8")) as Record<string, unknown>;

function edit(change: (m: any) => void): unknown {
  const m = structuredClone(base);
  change(m);
  return m;
}

async function findings(data: unknown) {
  const raw: RawManifest = { dir, manifestPath: `${dir}/task.json`, displayPath: "t/task.json", data, duplicateKeys: [] };
  return (await checkManifest(raw)).map((f) => `${f.pointer}: ${f.message} | ${f.hint}`);
}

describe("schema findings", () => {
  it("accepts the fixture as it is", async () => {
    expect(await findings(base)).toEqual([]);
  });

  it("names the missing field in the pointer, with its description as the hint", async () => {
    const out = await findings(edit((m) => delete m.paper.year));
    expect(out).toEqual(['/paper/year: missing required field | add "year": Year of publication, e.g. 2023']);
  });

  it("suggests the known field for a misspelt one", async () => {
    const out = await findings(edit((m) => (m.tests.timeout_total = 3)));
    expect(out).toEqual(["/tests/timeout_total: unknown field 'timeout_total' | did you mean 'timeout_total_s'?"]);
  });

  it("reduces a git upstream's oneOf noise to the field that is wrong", async () => {
    const out = await findings(edit((m) => (m.upstream.repo = "github.com/example/toy")));
    expect(out).toHaveLength(2);
    expect(out[0]).toMatch(/^\/upstream\/repo: "github.com\/example\/toy" (is not a valid uri|does not have the expected form)/);
    expect(out.every((l) => l.startsWith("/upstream/repo: "))).toBe(true);
  });

  it("gives one finding when an upstream has both forms", async () => {
    const out = await findings(edit((m) => (m.upstream.path = "../x")));
    expect(out).toEqual([
      "/upstream: is neither a git upstream nor a local upstream | pick one form: git upstream: remove 'path'; or local upstream: remove 'repo'",
    ]);
  });

  it("says what an upstream of the wrong type should be", async () => {
    const out = await findings(edit((m) => (m.upstream = "https://github.com/example/toy")));
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(/^\/upstream: must be an object \(git upstream or local upstream\), got "https/);
  });

  it("picks the line-reference form the value was meant to be", async () => {
    const out = await findings(
      edit((m) => {
        m.targets[0].mode = "region";
        m.targets[0].region = { start: { line: 0 }, end: { anchor: "" } };
      }),
    );
    expect(out).toEqual([
      "/targets/0/region/end/anchor: must not be empty | Text that the wanted line contains",
      "/targets/0/region/start/line: must be >= 1, got number 0 | 1-based line number",
    ]);
  });

  it("checks a prepare step by its kind only, and an unknown kind once", async () => {
    const out = await findings(
      edit((m) => {
        m.prepare = [{ kind: "notebook-to-module", notebook: "a.ipynb", out: "a.txt" }, { kind: "inline", file: "a.py" }, { file: "a.py" }];
      }),
    );
    expect(out).toEqual([
      '/prepare/0/out: "a.txt" does not have the expected form (\\.py$) | Python file to write inside the upstream tree, e.g. "demo_module.py"',
      '/prepare/1/kind: must be one of "notebook-to-module", "extract-function"; got "inline" | Which preparation: "notebook-to-module" or "extract-function"',
      '/prepare/2/kind: missing required field | add "kind": Which preparation: "notebook-to-module" or "extract-function"',
    ]);
  });

  it("points a repeated array item at the later copy", async () => {
    const out = await findings(edit((m) => (m.tests.files = ["tests/test_preference_loss.py", "tests/test_preference_loss.py"])));
    expect(out).toEqual(["/tests/files/1: repeats item 0 | remove the duplicate"]);
  });

  it("rejects an empty target list and non-positive timeouts", async () => {
    const out = await findings(
      edit((m) => {
        m.targets = [];
        m.tests.timeout_per_test_s = 0;
      }),
    );
    expect(out).toEqual([
      "/targets: must have at least 1 item | The functions, methods or classes to mask; at least one",
      "/tests/timeout_per_test_s: must be > 0, got number 0 | Seconds one test may run; positive and at most timeout_total_s",
    ]);
  });
});

describe("semantic findings", () => {
  it("replaces the schema's pattern error on a short commit with the friendly one", async () => {
    const out = await findings(edit((m) => (m.upstream.commit = "ABC123")));
    expect(out).toEqual(["/upstream/commit: commit must be a full 40-hex SHA, got 'ABC123' | git rev-parse ABC123 in the upstream clone"]);
  });

  it("asks for lowercase when the SHA is full but uppercase", async () => {
    const out = await findings(edit((m) => (m.upstream.commit = "0123456789ABCDEF0123456789ABCDEF01234567")));
    expect(out).toEqual(["/upstream/commit: commit must be a full 40-hex SHA, got '0123456789ABCDEF0123456789ABCDEF01234567' | write the SHA in lowercase"]);
  });

  it("checks that the test files suit tests.runner, and refuses vitest", async () => {
    const file = (base.tests as { files: string[] }).files[0]!;
    const node = await findings(
      edit((m) => {
        m.tests.runner = "node-test";
        m.tests.pytest_args = ["-q"];
      }),
    );
    expect(node).toEqual([
      `/tests/files/0: '${file}' is not a JavaScript or TypeScript file, and tests.runner is "node-test" | name node:test files *.test.ts or *.test.mjs, or drop "runner" to run pytest`,
      '/tests/pytest_args: pytest_args are given, but tests.runner is "node-test" | remove pytest_args: node:test takes none',
    ]);
    const vitest = await findings(edit((m) => (m.tests.runner = "vitest")));
    expect(vitest).toHaveLength(1);
    expect(vitest[0]).toMatch(/^\/tests\/runner: .*"pytest".*"node-test"/);
    expect(await findings(edit((m) => (m.tests.runner = "pytest")))).toEqual([]);
  });

  it("reports an id that differs from the folder name", async () => {
    const out = await findings(edit((m) => (m.id = "other-name")));
    expect(out).toEqual([
      "/id: id 'other-name' does not match its folder name 'valid-minimal' | rename the folder to 'other-name', or set \"id\": \"valid-minimal\"",
    ]);
  });

  it("forbids a region outside mode region and backwards line ranges", async () => {
    const out = await findings(edit((m) => (m.targets[0].region = { start: { line: 9 }, end: { line: 4 } })));
    expect(out).toEqual([
      '/targets/0/region: mode "body" takes no region | remove "region", or set "mode": "region"',
      "/targets/0/region/end: end line 4 is before start line 9 | swap start and end",
    ]);
  });

  it("flags the same target twice but not two definitions told apart by line", async () => {
    const twice = await findings(edit((m) => m.targets.push({ ...m.targets[0] })));
    expect(twice).toEqual([
      "/targets/1: target preference_loss in toy/losses.py is already /targets/0 | remove the duplicate, or give each definition its own `line`",
    ]);
    const byLine = await findings(edit((m) => m.targets.push({ ...m.targets[0], line: 12 })));
    expect(byLine).toEqual([]);
  });

  it("wants the per-test timeout within the total", async () => {
    const out = await findings(edit((m) => (m.tests.timeout_per_test_s = 121)));
    expect(out).toEqual([
      "/tests/timeout_per_test_s: per-test timeout 121s is longer than the total timeout 120s | make timeout_per_test_s at most timeout_total_s",
    ]);
  });

  it("checks every path field for '..', absolute paths and backslashes", async () => {
    const out = await findings(
      edit((m) => {
        m.upstream.subdir = "src\\toy";
        m.context_files = ["docs/../README.md"];
        m.tests.mount = "/abs";
        m.prepare = [{ kind: "extract-function", file: "../a.py", start: { line: 1 }, end: { line: 2 }, name: "f", params: [], returns: [] }];
      }),
    );
    expect(out.map((l) => l.split(" | ")[0])).toEqual([
      "/context_files/0: path contains '..': \"docs/../README.md\"",
      "/prepare/0/file: path contains '..': \"../a.py\"",
      '/tests/mount: path is absolute: "/abs"',
      "/upstream/subdir: path uses backslashes; use '/': \"src\\\\toy\"",
    ]);
  });

  it("knows the unknown category's closest match", async () => {
    const out = await findings(edit((m) => (m.category = "decoding & search strategy")));
    expect(out).toEqual(['/category: unknown category "decoding & search strategy" | did you mean "Decoding & Search Strategies"?']);
  });
});

describe("the typed example manifest", () => {
  it("passes the schema and the field checks (files aside)", async () => {
    const out = await findings({ ...EXAMPLE_MANIFEST, id: "valid-minimal" });
    // The example names a hinted instruction, a paper text, a record driver, a fixture generator
    // (script and output), candidate test files and fixtures that the fixture folder does not have;
    // and its paper.text beside a URL upstream is a paper leak (a field every manifest may not use at once).
    expect(out.map((l) => l.split(":")[0])).toEqual([
      "/hints",
      "/paper/text",
      "/paper/text",
      "/record/driver",
      "/record/generators/0/outputs/0",
      "/record/generators/0/script",
      "/tests/files/1",
      "/tests/files/2",
      "/tests/fixtures/0",
    ]);
  });
});
