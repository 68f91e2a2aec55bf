import { describe, expect, it } from "vitest";
import { arxivFileName, formatArxivRef, parseArxivId, parseArxivUrl } from "./arxiv.js";

describe("parseArxivId", () => {
  it.each([
    ["2305.18290v3", { id: "2305.18290", version: 3 }],
    ["2305.18290", { id: "2305.18290" }],
    ["arXiv:1904.09675v3", { id: "1904.09675", version: 3 }],
    ["0704.0001v1", { id: "0704.0001", version: 1 }],
    ["hep-th/9901001v2", { id: "hep-th/9901001", version: 2 }],
    ["math.GT/0309136", { id: "math.GT/0309136" }],
  ])("reads %s", (raw, ref) => {
    expect(parseArxivId(raw)).toEqual(ref);
  });
  it.each(["230.18290", "2305.18290v", "v3", "10.1145/123", "2305.18290.pdf"])("rejects %s", (raw) => {
    expect(parseArxivId(raw)).toBeUndefined();
  });
});

describe("parseArxivUrl", () => {
  it("reads abstract, PDF and HTML links, with and without version", () => {
    expect(parseArxivUrl("https://arxiv.org/abs/2305.18290")).toEqual({ id: "2305.18290", page: "abs" });
    expect(parseArxivUrl("http://arxiv.org/pdf/2305.18290v2.pdf")).toEqual({ id: "2305.18290", version: 2, page: "pdf" });
    expect(parseArxivUrl("https://export.arxiv.org/abs/hep-th/9901001v1")).toEqual({ id: "hep-th/9901001", version: 1, page: "abs" });
    expect(parseArxivUrl("https://www.arxiv.org/html/2401.11374v4/")).toEqual({ id: "2401.11374", version: 4, page: "html" });
  });
  it("ignores other hosts and paths", () => {
    expect(parseArxivUrl("https://aclanthology.org/2023.emnlp-main.439.pdf")).toBeUndefined();
    expect(parseArxivUrl("https://arxiv.org/list/cs.CL/recent")).toBeUndefined();
    expect(parseArxivUrl("https://notarxiv.org/abs/2305.18290")).toBeUndefined();
    expect(parseArxivUrl("not a url")).toBeUndefined();
  });
});

describe("formatting", () => {
  it("writes ids and file names", () => {
    expect(formatArxivRef({ id: "2305.18290", version: 3 })).toBe("2305.18290v3");
    expect(formatArxivRef({ id: "2305.18290" })).toBe("2305.18290");
    expect(arxivFileName("2305.18290v3")).toBe("2305.18290v3.pdf");
    expect(arxivFileName("hep-th/9901001v2")).toBe("hep-th_9901001v2.pdf");
  });
});
