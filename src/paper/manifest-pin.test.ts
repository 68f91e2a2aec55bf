import { describe, expect, it } from "vitest";
import { setPaperPin } from "./manifest-pin.js";

const PIN = { sha256: "ab".repeat(32), bytes: 1234 };
const H = `"${PIN.sha256}"`;

describe("setPaperPin", () => {
  it("adds the members after arxiv in a one-per-line object, keeping the rest byte for byte", () => {
    const text = `{\n  "id": "t",\n  "paper": {\n    "title": "T",\n    "arxiv": "2305.18290v3"\n  },\n  "category": "x"\n}\n`;
    expect(setPaperPin(text, PIN)).toBe(
      `{\n  "id": "t",\n  "paper": {\n    "title": "T",\n    "arxiv": "2305.18290v3",\n    "sha256": ${H},\n    "bytes": 1234\n  },\n  "category": "x"\n}\n`,
    );
  });

  it("keeps an inline paper object inline", () => {
    const text = `{ "paper": { "title": "T", "pdf_url": "https://x/p.pdf" }, "id": "t" }`;
    expect(setPaperPin(text, PIN)).toBe(`{ "paper": { "title": "T", "pdf_url": "https://x/p.pdf", "sha256": ${H}, "bytes": 1234 }, "id": "t" }`);
  });

  it("puts sha256 before an existing bytes, whatever the order of the other members", () => {
    const text = `{\n  "paper": {\n    "arxiv": "2305.18290v3",\n    "bytes": 9,\n    "title": "T"\n  }\n}\n`;
    expect(setPaperPin(text, PIN)).toBe(`{\n  "paper": {\n    "arxiv": "2305.18290v3",\n    "sha256": ${H},\n    "bytes": 1234,\n    "title": "T"\n  }\n}\n`);
  });

  it("replaces existing values in place", () => {
    const text = `{"paper": {"arxiv": "2305.18290v3", "sha256": "${"0".repeat(64)}", "bytes": 1}, "text": "paper: {\\"sha256\\": 1}"}`;
    expect(setPaperPin(text, PIN)).toBe(`{"paper": {"arxiv": "2305.18290v3", "sha256": ${H}, "bytes": 1234}, "text": "paper: {\\"sha256\\": 1}"}`);
  });

  it("ignores look-alike keys in nested objects and strings", () => {
    const text = `{\n  "notes": { "paper": 1 },\n  "paper": { "title": "a \\"paper\\": {", "arxiv": "2305.18290v3" }\n}\n`;
    const out = JSON.parse(setPaperPin(text, PIN));
    expect(out.notes).toEqual({ paper: 1 });
    expect(out.paper).toEqual({ title: 'a "paper": {', arxiv: "2305.18290v3", sha256: PIN.sha256, bytes: 1234 });
  });

  it("re-prints the manifest when it has no paper object to edit", () => {
    expect(setPaperPin(`{"id": "t"}`, PIN)).toBe(JSON.stringify({ id: "t", paper: { sha256: PIN.sha256, bytes: 1234 } }, null, 2) + "\n");
  });
});
