import { describe, expect, it } from "vitest";
import { findInPaper, formatFinding, termPattern } from "./find.js";
import { isHeading } from "./headings.js";

const PAGES = {
  "1": "A Study of Pairwise Objectives\nAbstract\nWe revisit preference learning for small models.\n1 Introduction\nPreference data pairs a chosen and a rejected answer.",
  "2": "2 Method\nThe logistic objective compares two margins.\nL = -log σ(β r) (3)\nwhere r is the reward margin and β a\ntemperature. We call it the pair-\nwise loss.\n2.1 Label Smoothing\nSee Eq. (3) for the base case.",
  "3": "3 Experiments\nWe train with the pairwise loss for three epochs.\nREFERENCES\n[1] A. Author. Preference learning. 2023.",
};

describe("isHeading", () => {
  it.each(["1 Introduction", "3.2 Decoding", "4. Results", "Abstract", "References", "RELATED WORK", "A.1 Proofs", "II. METHOD", "Appendix B"])(
    "accepts %s",
    (line) => {
      expect(isHeading(line)).toBe(true);
    },
  );
  it.each([
    "L = -log σ(β r) (3)",
    "2 is the number of pairs we use in each batch, and it is set here.",
    "We revisit preference learning.",
    "KL",
    "(3)",
    "12",
    "3 0.51 0.77 0.80",
    "where r is the reward margin and β a",
  ])("rejects %s", (line) => {
    expect(isHeading(line)).toBe(false);
  });
});

describe("findInPaper", () => {
  it("finds a heading's page and reports it as its own section", () => {
    const hits = findInPaper(PAGES, ["Method"]);
    expect(hits[0]).toMatchObject({ page: 2, line: 1, heading: "2 Method", snippet: "2 Method" });
  });

  it("reports equation numbers within five lines and the nearest heading", () => {
    const [hit] = findInPaper(PAGES, ["reward margin"]);
    expect(hit).toMatchObject({ page: 2, line: 4, heading: "2 Method" });
    expect(hit!.equations).toEqual(["3"]);
    expect(formatFinding(hit!)).toBe("p.2 l.4 [§ 2 Method] (eq. 3): where r is the reward margin and β a");
  });

  it("matches multi-word terms across line breaks and hyphenated breaks, case-insensitively", () => {
    const hits = findInPaper(PAGES, ["PAIRWISE LOSS"]);
    expect(hits.map((h) => [h.page, h.line])).toEqual([
      [2, 5],
      [3, 2],
    ]);
    expect(hits[0]!.snippet).toBe("temperature. We call it the pair- wise loss.");
    expect(findInPaper(PAGES, ["beta a temperature"])).toEqual([]);
    expect(findInPaper(PAGES, ["β a temperature"])[0]).toMatchObject({ page: 2, line: 4 });
  });

  it("inherits the heading from an earlier page and ranks by page and line", () => {
    const hits = findInPaper(PAGES, ["preference", "Label"]);
    expect(hits.map((h) => `${h.term}@${h.page}:${h.line}`)).toEqual(["preference@1:3", "preference@1:5", "Label@2:7", "preference@3:4"]);
    expect(hits[0]!.heading).toBe("Abstract");
    expect(hits[3]!.heading).toBe("REFERENCES");
    expect(hits[2]!.heading).toBe("2.1 Label Smoothing");
  });

  it("does not count years or citations as equation numbers", () => {
    const hits = findInPaper({ "1": "1 Setup\nAs in prior work (2023) we use (a) pairs.\nnothing else" }, ["prior work"]);
    expect(hits[0]!.equations).toBeUndefined();
  });

  it("treats regex characters in terms literally and ignores blank terms", () => {
    expect(termPattern("  ")).toBeUndefined();
    expect(findInPaper(PAGES, ["σ(β r)"])[0]).toMatchObject({ page: 2, line: 3 });
    expect(findInPaper(PAGES, ["a.b*"])).toEqual([]);
  });

  it("shortens long snippets around the match", () => {
    const long = `${"x ".repeat(200)}needle${" y".repeat(200)}`;
    const [hit] = findInPaper({ "1": long }, ["needle"]);
    expect(hit!.snippet.length).toBeLessThanOrEqual(162);
    expect(hit!.snippet).toContain("needle");
    expect(hit!.snippet.startsWith("…")).toBe(true);
    expect(hit!.snippet.endsWith("…")).toBe(true);
  });
});
