import type { Command } from "commander";
import { EXIT, LmrError } from "../../core/errors.js";
import { writeFileAtomic, writeJsonAtomic } from "../../core/fs-atomic.js";
import { extractPaper, readPaperPages } from "../../paper/extract.js";
import { findInPaper, formatFinding } from "../../paper/find.js";
import { toMarkdown } from "../../paper/markdown.js";
import { action } from "../action.js";
import { printArtifact, printJsonFailed, printJsonOk } from "../output.js";
import { registerPaperFetch } from "./paper-fetch.js";

interface ExtractOptions {
  out?: string;
  md?: string;
}

interface FindOptions {
  json?: boolean;
}

export function registerPaper(program: Command): void {
  const paper = program
    .command("paper")
    .description("papers: fetch the pinned PDFs, extract a PDF to paper.json / paper.md, find terms in it")
    .addHelpText(
      "after",
      `
Examples:
  $ lmr paper fetch
  $ lmr paper extract paper.pdf --out tasks/dpo-loss/paper.json --md paper.md
  $ lmr paper find tasks/dpo-loss/paper.json "preference loss" beta`,
    );

  registerPaperFetch(paper);

  paper
    .command("extract")
    .description('extract the text of every page of a PDF as paper.json ({"1": text, ...})')
    .argument("<PDF>", "the paper as a PDF file")
    .option("--out <FILE>", "write paper.json to FILE (default: print it to stdout)")
    .option("--md <FILE>", "also write paper.md: a '## Page N' section per page, line-end hyphenation joined")
    .addHelpText(
      "after",
      `
Text comes from pdf.js (via unpdf) page by page; headings stay on their own
lines, maths is split across lines, ligatures are spelled out. Files are
written atomically. Exit codes: 0 written, 2 not a readable PDF or bad usage,
3 a file could not be written.

Examples:
  $ lmr paper extract paper.pdf > paper.json
  $ lmr paper extract paper.pdf --out paper.json --md paper.md`,
    )
    .action(action(runExtract));

  paper
    .command("find")
    .description("find terms in a paper: page, line, section heading and nearby equation numbers")
    .argument("<PAPER>", "a PDF or a paper.json")
    .argument("<TERMS...>", "terms to find (case-insensitive; quote multi-word terms)")
    .option("--json", "print the findings as a JSON array")
    .addHelpText(
      "after",
      `
Prints one line per occurrence, in page and line order:
  p.N l.M [§ heading] (eq. 3): snippet
A multi-word term matches across spaces and line breaks, and a word hyphenated
at a line end still matches. Equation numbers are labels like "(3)" at a line
end, or "Eq. (3)" references, within 5 lines of the match.
Exit codes: 0 every term was found, 1 some term was not found, 2 bad input.

Examples:
  $ lmr paper find paper.pdf "preference loss" "label smoothing"
  $ lmr paper find paper.json beta --json`,
    )
    .action(action(runFind));
}

async function runExtract(pdf: string, opts: ExtractOptions): Promise<number> {
  const paper = await extractPaper(pdf);
  const count = Object.keys(paper.pages).length;
  if (opts.out !== undefined) await write(opts.out, () => writeJsonAtomic(opts.out!, paper.pages));
  if (opts.md !== undefined) await write(opts.md, () => writeFileAtomic(opts.md!, toMarkdown(paper.pages)));
  if (opts.out === undefined) printArtifact(paper.pages);
  const written = [opts.out, opts.md].filter((f): f is string => f !== undefined);
  if (written.length > 0) process.stderr.write(`lmr: ${pdf}: ${count} page${count === 1 ? "" : "s"} → ${written.join(", ")}\n`);
  return EXIT.ok;
}

async function runFind(paperPath: string, terms: string[], opts: FindOptions): Promise<number> {
  const blank = terms.findIndex((t) => t.trim() === "");
  if (blank >= 0) throw new LmrError({ code: "paper/term-blank", message: `term ${blank + 1} is blank`, hint: "give words to search for" });
  const { pages } = await readPaperPages(paperPath);
  const findings = findInPaper(pages, terms);
  const missing = terms.filter((t) => !findings.some((f) => f.term === t));
  if (opts.json && missing.length > 0)
    printJsonFailed(
      "paper find",
      new LmrError({
        code: "paper/term-not-found",
        file: paperPath,
        message: `not found: ${missing.map((t) => JSON.stringify(t)).join(", ")}`,
        hint: "try another spelling, or a shorter term",
      }),
      findings,
    );
  else if (opts.json) printJsonOk("paper find", findings);
  else for (const f of findings) process.stdout.write(`${formatFinding(f)}\n`);
  for (const t of missing) process.stderr.write(`lmr: ${paperPath}: "${t}" not found\n`);
  return missing.length > 0 ? EXIT.check : EXIT.ok;
}

async function write(file: string, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (err) {
    throw new LmrError({
      code: "paper/write-failed",
      file,
      message: `cannot write it (${(err as Error).message})`,
      hint: "choose a writable path",
      cause: err,
    });
  }
}
