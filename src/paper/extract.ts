import { readFile } from "node:fs/promises";
import { extractText, getDocumentProxy } from "unpdf";
import { LmrError } from "../core/errors.js";
import type { PaperPages } from "./types.js";

const PDF_MAGIC = "%PDF-";

/** Typographic ligatures pdf.js passes through; searching "fine-tuning" must find "ﬁne-tuning". */
const LIGATURES: Record<string, string> = { "\uFB00": "ff", "\uFB01": "fi", "\uFB02": "fl", "\uFB03": "ffi", "\uFB04": "ffl", "\uFB05": "st", "\uFB06": "st" };

/** Page text as the paper.json shape wants it: LF line ends, ligatures spelled out, no trailing blanks. */
export function normalizePageText(text: string): string {
  return text
    .replace(/\r\n?/g, "\n")
    .replace(/[\uFB00-\uFB06]/g, (c) => LIGATURES[c] ?? c)
    .split("\n")
    .map((l) => l.replace(/[ \t\u00A0]+$/, ""))
    .join("\n")
    .replace(/\n+$/, "");
}

/** Text of every page of a PDF: { pages: { "1": text, "2": text, ... } }. */
export async function extractPaper(pdfPath: string): Promise<PaperPages> {
  const data = await readInput(pdfPath);
  if (!data.subarray(0, 1024).toString("latin1").includes(PDF_MAGIC)) {
    throw notPdf(pdfPath, "the file does not start with a PDF header (%PDF-)");
  }
  let texts: string[];
  try {
    // verbosity 0: pdf.js would otherwise print font warnings to stdout
    const doc = await getDocumentProxy(new Uint8Array(data), { verbosity: 0 });
    texts = (await extractText(doc, { mergePages: false })).text;
    await doc.destroy();
  } catch (err) {
    throw notPdf(pdfPath, `pdf.js cannot read it (${err instanceof Error ? err.message : String(err)})`, err);
  }
  const pages: Record<string, string> = {};
  texts.forEach((t, i) => {
    pages[String(i + 1)] = normalizePageText(t);
  });
  return { pages };
}

/**
 * Paper pages from a PDF or from a paper.json ({page: text}); which one is
 * decided by the content, not the file name.
 */
export async function readPaperPages(path: string): Promise<PaperPages> {
  const data = await readInput(path);
  const head = data.subarray(0, 1024).toString("latin1");
  if (head.includes(PDF_MAGIC)) return extractPaper(path);
  if (!/^\s*[{[]/.test(data.toString("utf8", 0, 64).replace(/^\uFEFF/, ""))) {
    throw new LmrError({
      code: "paper/unreadable",
      file: path,
      message: "neither a PDF nor a paper.json",
      hint: "give a .pdf file or a JSON object of page number → text",
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(data.toString("utf8").replace(/^\uFEFF/, ""));
  } catch (err) {
    throw new LmrError({
      code: "paper/json-invalid",
      file: path,
      message: `not valid JSON (${(err as Error).message})`,
      hint: 'paper.json is an object of page number → text, e.g. {"1": "..."}',
    });
  }
  return { pages: checkPages(parsed, path) };
}

/** A paper.json value must be {"1": text, "2": text, ...}; returns it with keys in page order. */
export function checkPages(value: unknown, file: string): Record<string, string> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new LmrError({ code: "paper/json-invalid", file, message: "expected an object of page number → text", hint: 'write {"1": "text of page 1", ...}' });
  }
  const entries = Object.entries(value as Record<string, unknown>);
  for (const [key, text] of entries) {
    if (!/^[1-9][0-9]*$/.test(key)) {
      throw new LmrError({
        code: "paper/json-invalid",
        file,
        pointer: `/${key}`,
        message: `key '${key}' is not a page number`,
        hint: 'keys are 1-based page numbers as strings: "1", "2", ...',
      });
    }
    if (typeof text !== "string") {
      throw new LmrError({
        code: "paper/json-invalid",
        file,
        pointer: `/${key}`,
        message: `page ${key} is ${text === null ? "null" : typeof text}, not text`,
        hint: "each value is the text of that page",
      });
    }
  }
  const pages: Record<string, string> = {};
  for (const [key, text] of entries.sort((a, b) => Number(a[0]) - Number(b[0]))) pages[key] = text as string;
  return pages;
}

async function readInput(path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new LmrError({
      code: "paper/unreadable",
      file: path,
      message: code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a folder, not a file" : `cannot read it (${code ?? String(err)})`,
      hint: "give the path of a PDF or paper.json",
      cause: err,
    });
  }
}

function notPdf(file: string, why: string, cause?: unknown): LmrError {
  return new LmrError({
    code: "paper/pdf-invalid",
    file,
    message: `not a readable PDF: ${why}`,
    hint: "check that the file is a complete, unencrypted PDF",
    cause,
  });
}
