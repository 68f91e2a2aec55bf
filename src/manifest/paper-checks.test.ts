import { describe, expect, it } from "vitest";
import { checkPaperPin } from "./paper-checks.js";

const paper = (p: Record<string, unknown>) => ({ paper: { title: "T", url: "https://example.org/p", year: 2024, ...p } });
const pointers = (p: Record<string, unknown>) => checkPaperPin(paper(p)).map((f) => `${f.pointer}: ${f.message}`);

describe("checkPaperPin", () => {
  it("accepts consistent pins", () => {
    expect(pointers({ url: "https://arxiv.org/abs/2305.18290", arxiv: "2305.18290v3" })).toEqual([]);
    expect(pointers({ url: "https://arxiv.org/abs/2305.18290v3", arxiv: "2305.18290v3", sha256: "a".repeat(64), bytes: 10 })).toEqual([]);
    expect(pointers({ url: "https://aclanthology.org/D19-1053", pdf_url: "https://aclanthology.org/D19-1053.pdf" })).toEqual([]);
    expect(pointers({ arxiv: "2305.18290v3", pdf_url: "https://arxiv.org/pdf/2305.18290v3" })).toEqual([]);
    expect(pointers({})).toEqual([]);
  });

  it("names an arXiv id that is not the paper paper.url links to", () => {
    const [f] = checkPaperPin(paper({ url: "https://arxiv.org/abs/2305.18291", arxiv: "2305.18290v3" }));
    expect(f).toMatchObject({ pointer: "/paper/arxiv", message: "paper.arxiv '2305.18290v3' is not the paper that paper.url links to (arXiv 2305.18291)" });
    expect(f!.hint).toContain('"arxiv": "2305.18291vN"');
  });

  it("names versions that disagree", () => {
    expect(pointers({ url: "https://arxiv.org/abs/2305.18290v2", arxiv: "2305.18290v3" })).toEqual([
      "/paper/arxiv: paper.url links to version 2 (2305.18290v2) but paper.arxiv pins version 3",
    ]);
  });

  it("rejects an abstract page or an unversioned arXiv PDF as pdf_url, and a pdf_url of another paper", () => {
    expect(pointers({ pdf_url: "https://arxiv.org/abs/2305.18290" })[0]).toMatch(/^\/paper\/pdf_url: paper.pdf_url is an arXiv abstract page, not a PDF/);
    expect(pointers({ pdf_url: "https://arxiv.org/pdf/2305.18290" })[0]).toMatch(/without a version/);
    expect(pointers({ arxiv: "2305.18290v3", pdf_url: "https://arxiv.org/pdf/2401.11374v4" })).toEqual([
      "/paper/pdf_url: paper.pdf_url downloads arXiv 2401.11374v4, but paper.arxiv pins 2305.18290v3",
    ]);
  });

  it("accepts a hash without a download address (the offline pin: the PDF comes from --papers DIR or the cache)", () => {
    expect(pointers({ sha256: "a".repeat(64), bytes: 3 })).toEqual([]);
  });

  it("tolerates a mistyped paper section (the schema reports it)", () => {
    expect(checkPaperPin({ paper: "x" })).toEqual([]);
    expect(checkPaperPin({ paper: { arxiv: 3, url: null } })).toEqual([]);
  });
});
