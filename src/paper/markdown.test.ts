import { describe, expect, it } from "vitest";
import { checkPages, normalizePageText } from "./extract.js";
import { joinHyphenation, toMarkdown } from "./markdown.js";

describe("joinHyphenation", () => {
  it("joins a lowercase word broken at a line end and keeps the rest of the line", () => {
    expect(joinHyphenation("We study pref-\nerence optimisation here.")).toBe("We study preference\noptimisation here.");
  });
  it("drops a continuation line that held only the word's end", () => {
    expect(joinHyphenation("a tempera-\nture\nnext line")).toBe("a temperature\nnext line");
  });
  it("leaves capitalised continuations, minus signs and dashes alone", () => {
    const text = "Self-\nAttention is used\nvalue x -\ny and a --\nb";
    expect(joinHyphenation(text)).toBe(text);
  });
  it("joins a word broken over three lines", () => {
    expect(joinHyphenation("re-\npa-\nrameterised model")).toBe("reparameterised\nmodel");
  });
});

describe("toMarkdown", () => {
  it("writes a section per page in page order and escapes Markdown syntax", () => {
    const md = toMarkdown({ "10": "last", "2": "# not a heading\n- not a list", "1": "first pa-\nper" });
    expect(md).toBe("## Page 1\n\nfirst paper\n\n## Page 2\n\n\\# not a heading\n\\- not a list\n\n## Page 10\n\nlast\n");
  });
  it("marks empty pages", () => {
    expect(toMarkdown({ "1": "  " })).toContain("_(no text on this page)_");
  });
});

describe("page text", () => {
  it("spells out ligatures and trims trailing blanks", () => {
    expect(normalizePageText("the \uFB01nal e\uFB00ect  \r\nnext\n\n")).toBe("the final effect\nnext");
  });
  it("rejects paper.json keys that are not page numbers, naming the key", () => {
    expect(() => checkPages({ "1": "a", intro: "b" }, "paper.json")).toThrow(/key 'intro' is not a page number/);
    expect(() => checkPages({ "1": 3 }, "paper.json")).toThrow(/page 1 is number/);
    expect(Object.keys(checkPages({ "10": "b", "2": "a" }, "p.json"))).toEqual(["2", "10"]);
  });
});
