import { afterEach, describe, expect, it } from "vitest";
import { arxivBaseFrom, DEFAULT_ARXIV_BASE, formatBytes, paperSourceOf, papersDirNames, pinsPdf } from "./pin.js";

const base = { title: "T", url: "https://example.org/p", year: 2024 };

describe("paperSourceOf", () => {
  it("downloads from pdf_url before the arXiv address, keyed independently of the mirror", () => {
    expect(paperSourceOf({ ...base, arxiv: "2305.18290v3" }, "http://mirror/pdf/")).toEqual({
      url: "http://mirror/pdf/2305.18290v3",
      pointer: "/paper/arxiv",
      key: "arxiv:2305.18290v3",
    });
    expect(paperSourceOf({ ...base, arxiv: "2305.18290v3", pdf_url: "https://x/p.pdf" })).toEqual({
      url: "https://x/p.pdf",
      pointer: "/paper/pdf_url",
      key: "https://x/p.pdf",
    });
    expect(paperSourceOf(base)).toBeUndefined();
    expect(paperSourceOf({ ...base, arxiv: "hep-th/9901001v1" })?.url).toBe(`${DEFAULT_ARXIV_BASE}hep-th/9901001v1`);
  });
  it("downloads a hash pinned beside an unversioned arXiv paper.url from the unversioned address (the hash tells versions apart)", () => {
    const arxivUrl = { ...base, url: "https://arxiv.org/abs/2502.16982" };
    expect(paperSourceOf(arxivUrl)).toBeUndefined();
    expect(paperSourceOf({ ...arxivUrl, sha256: "a".repeat(64), bytes: 5 }, "http://mirror/pdf/")).toEqual({
      url: "http://mirror/pdf/2502.16982",
      pointer: "/paper/url",
      key: "arxiv:2502.16982",
    });
    expect(paperSourceOf({ ...base, sha256: "a".repeat(64), bytes: 5 })).toBeUndefined();
  });
  it("says whether a PDF is pinned", () => {
    expect(pinsPdf(base)).toBe(false);
    expect(pinsPdf({ ...base, text: "paper.json" })).toBe(false);
    expect(pinsPdf({ ...base, pdf_url: "https://x/p.pdf" })).toBe(true);
  });
});

describe("papersDirNames", () => {
  it("tries the hash, the versioned arXiv id, then the task id", () => {
    expect(papersDirNames({ ...base, arxiv: "hep-th/9901001v2", sha256: "c".repeat(64), bytes: 1 }, "t")).toEqual([
      `${"c".repeat(64)}.pdf`,
      "hep-th_9901001v2.pdf",
      "t.pdf",
    ]);
    expect(papersDirNames(base, "t")).toEqual(["t.pdf"]);
  });
});

describe("arxivBaseFrom", () => {
  const saved = process.env.LMR_ARXIV_BASE;
  afterEach(() => {
    if (saved === undefined) delete process.env.LMR_ARXIV_BASE;
    else process.env.LMR_ARXIV_BASE = saved;
  });
  it("takes the flag, then $LMR_ARXIV_BASE, then arxiv.org, always ending in '/'", () => {
    process.env.LMR_ARXIV_BASE = "http://env/pdf";
    expect(arxivBaseFrom("http://flag/pdf")).toBe("http://flag/pdf/");
    expect(arxivBaseFrom()).toBe("http://env/pdf/");
    process.env.LMR_ARXIV_BASE = "";
    expect(arxivBaseFrom()).toBe(DEFAULT_ARXIV_BASE);
  });
});

it("formats sizes", () => {
  expect([formatBytes(512), formatBytes(83_000), formatBytes(2_345_678)]).toEqual(["512 bytes", "83 kB", "2.3 MB"]);
});
