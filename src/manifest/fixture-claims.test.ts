import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLAIM_FINDINGS, checkFixtureClaims, listFixtureClaims, listFixtureFiles } from "./fixture-claims.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "lmr-claims-"));
  await mkdir(join(dir, "fixtures", "more"), { recursive: true });
  await mkdir(join(dir, "generators"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const put = (rel: string, text = "{}\n") => writeFile(join(dir, rel), text);
const manifest = (record: unknown, fixtures: string[] = ["fixtures"]) => ({ record, tests: { files: [], fixtures } });

describe("fixture claims", () => {
  it("lists what the driver and each generator make, and the files under fixtures/ without placeholders", async () => {
    const m = manifest({ driver: "driver.py", generators: [{ script: "generators/a.py", outputs: ["fixtures/a.json", "fixtures/more/b.json"] }] });
    expect(listFixtureClaims(m).map((c) => [c.file, c.by, c.pointer])).toEqual([
      ["fixtures/calls.json", "driver", "/record/driver"],
      ["fixtures/calls.npz", "driver", "/record/driver"],
      ["fixtures/a.json", "generators/a.py", "/record/generators/0/outputs/0"],
      ["fixtures/more/b.json", "generators/a.py", "/record/generators/0/outputs/1"],
    ]);
    await put("fixtures/.gitkeep", "");
    await put("fixtures/more/b.json");
    await put("fixtures/a.json");
    expect(await listFixtureFiles(dir)).toEqual(["fixtures/a.json", "fixtures/more/b.json"]);
  });

  it("a task whose files are all claimed, generated and shipped has no finding", async () => {
    await put("generators/a.py", "");
    await put("fixtures/a.json");
    await put("fixtures/calls.json");
    expect(await checkFixtureClaims(manifest({ driver: "driver.py", generators: [{ script: "generators/a.py", outputs: ["fixtures/a.json"] }] }), dir)).toEqual(
      [],
    );
  });

  it("reports an unclaimed file (with the driver a recording names), a missing output and script, one claimed twice, one not shipped", async () => {
    await put("fixtures/calls.json", JSON.stringify({ driver: { file: "drive.py" } }));
    await put("fixtures/notes.txt", "x");
    const m = manifest(
      {
        generators: [
          { script: "generators/a.py", outputs: ["fixtures/a.json", "fixtures/notes.txt"] },
          { script: "generators/b.py", outputs: ["fixtures/a.json", "data/c.json"] },
        ],
      },
      ["fixtures/notes.txt"],
    );
    const findings = await checkFixtureClaims(m, dir);
    expect(findings.map((f) => `${f.pointer}: ${f.message}`)).toEqual([
      "/record/generators/0/script: 'generators/a.py' does not exist in the task folder",
      "/record/generators/1/script: 'generators/b.py' does not exist in the task folder",
      "/record/generators/0/outputs/0: 'fixtures/a.json' is not in tests.fixtures, so graders never get it",
      "/record/generators/0/outputs/0: 'fixtures/a.json' does not exist: generators/a.py has not been run",
      "/record/generators/1/outputs/0: 'fixtures/a.json' is also made by generators/a.py (/record/generators/0/outputs/0)",
      "/record/generators/1/outputs/1: 'data/c.json' is not under fixtures/",
      "/record: 'fixtures/calls.json' is not made by record.driver or any record.generators entry",
    ]);
    expect(findings.at(-1)!.hint).toBe('it was recorded by drive.py: set "record": {"driver": "drive.py"}');
    expect(findings.every((f) => CLAIM_FINDINGS.has(f))).toBe(true);
  });

  it("says nothing about a task without a record section (tasks made before generators existed)", async () => {
    await put("fixtures/cases.json");
    expect(await checkFixtureClaims({ tests: { files: [], fixtures: ["fixtures"] } }, dir)).toEqual([]);
  });
});
