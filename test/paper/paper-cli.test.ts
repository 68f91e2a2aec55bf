import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Finding } from "../../src/paper/types.js";
import { makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli, jsonData } from "../helpers/run-cli.js";
import { buildPdf } from "./pdf-writer.js";

afterAll(removeTempDirs);

/** A three-page paper we wrote; σ and β are drawn with the Symbol font. */
function samplePaper(): Buffer {
  return buildPdf([
    [
      "Pairwise Objectives for Small Models",
      "Abstract",
      "We revisit preference learning with a sim-",
      "ple logistic objective.",
      "1 Introduction",
      "Preference data pairs a chosen and a rejected answer.",
    ],
    [
      "2 Method",
      "The objective compares the margins of two models.",
      [{ text: "L = -log " }, { text: "s", font: "symbol" }, { text: "(" }, { text: "b", font: "symbol" }, { text: " r)      (3)" }],
      "where r is the reward margin and the temperature",
      [{ text: "b", font: "symbol" }, { text: " > 0 scales it." }],
    ],
    ["3 Experiments", "We train with the logistic objective for three epochs.", "REFERENCES", "[1] A. Author. Preference learning. 2023."],
  ]);
}

describe("lmr paper extract / find on a PDF we generate", () => {
  let dir: string;
  let pdf: string;

  beforeAll(async () => {
    dir = await makeTempDir("paper");
    pdf = join(dir, "paper.pdf");
    await writeFile(pdf, samplePaper());
  });

  it("extracts one entry per page with headings on their own lines and Greek letters decoded", async () => {
    const r = await runCli(["paper", "extract", pdf]);
    expect(r.exitCode).toBe(0);
    const pages = JSON.parse(r.stdout) as Record<string, string>;
    expect(Object.keys(pages)).toEqual(["1", "2", "3"]);
    expect(pages["2"]!.split("\n")[0]).toBe("2 Method");
    expect(pages["2"]).toContain("L = -log σ(β r)");
    expect(pages["2"]).toMatch(/\(3\)$/m);
    expect(pages["3"]).toContain("REFERENCES");
  });

  it("writes paper.json and paper.md atomically, joining line-end hyphenation in the Markdown only", async () => {
    const out = join(dir, "out", "paper.json");
    const md = join(dir, "out", "paper.md");
    const r = await runCli(["paper", "extract", pdf, "--out", out, "--md", md]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("3 pages");
    const pages = JSON.parse(await readFile(out, "utf8")) as Record<string, string>;
    expect(pages["1"]).toContain("sim-\nple");
    const text = await readFile(md, "utf8");
    expect(text.match(/^## Page \d+$/gm)).toEqual(["## Page 1", "## Page 2", "## Page 3"]);
    expect(text).toContain("with a simple\nlogistic objective.");
  });

  it("finds a heading's page, its section and the equation number near a term", async () => {
    const r = await runCli(["paper", "find", pdf, "Method", "reward margin", "--json"]);
    expect(r.exitCode).toBe(0);
    const hits = jsonData(r.stdout) as Finding[];
    expect(hits[0]).toMatchObject({ term: "Method", page: 2, line: 1, heading: "2 Method" });
    const margin = hits.find((h) => h.term === "reward margin")!;
    expect(margin).toMatchObject({ page: 2, line: 4, heading: "2 Method", equations: ["3"] });
  });

  it("prints findings as lines, also from a paper.json, and exits 1 when a term is missing", async () => {
    const json = join(dir, "pages.json");
    await writeFile(json, (await runCli(["paper", "extract", pdf])).stdout);
    const r = await runCli(["paper", "find", json, "simple logistic", "no such phrase"]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe("p.1 l.3 [§ Abstract]: We revisit preference learning with a sim- ple logistic objective.");
    expect(r.stderr).toContain('"no such phrase" not found');
    const refs = await runCli(["paper", "find", json, "preference learning"]);
    expect(
      refs.stdout
        .trim()
        .split("\n")
        .map((l) => l.split(":")[0]),
    ).toEqual(["p.1 l.3 [§ Abstract]", "p.3 l.4 [§ REFERENCES]"]);
  });

  it("rejects a file that is not a PDF, or a truncated one, with exit 2 naming the file", async () => {
    const bad = join(dir, "bad.pdf");
    await writeFile(bad, "this is not a pdf\n");
    const r1 = await runCli(["paper", "extract", bad]);
    expect(r1.exitCode).toBe(2);
    expect(r1.stderr).toContain(`${bad}: not a readable PDF`);
    const cut = join(dir, "cut.pdf");
    await writeFile(cut, samplePaper().subarray(0, 300));
    const r2 = await runCli(["paper", "extract", cut]);
    expect(r2.exitCode).toBe(2);
    expect(r2.stderr).toContain(`${cut}: not a readable PDF`);
    const r3 = await runCli(["paper", "find", join(dir, "missing.pdf"), "x"]);
    expect(r3.exitCode).toBe(2);
    expect(r3.stderr).toContain("missing.pdf: no such file");
  });
});
