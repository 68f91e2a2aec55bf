/**
 * A tiny PDF 1.4 writer for tests: pages of text lines in Helvetica, with
 * optional runs in the Symbol font (Greek letters), so tests never need a
 * third-party paper. Text is WinAnsi (Latin-1) per run.
 */
interface Run {
  text: string;
  /** "sans" = Helvetica (default), "symbol" = Symbol (e.g. "s" draws σ, "b" draws β). */
  font?: "sans" | "symbol";
}
export type Line = string | Run[];

const FONT_SIZE = 11;
const LEADING = 14;
const TOP = 760;
const LEFT = 72;

function escapePdfString(s: string): string {
  return s.replace(/[\\()]/g, (c) => `\\${c}`);
}

function drawLine(line: Line): string {
  const runs = typeof line === "string" ? [{ text: line }] : line;
  return runs.map((r) => `/${r.font === "symbol" ? "F2" : "F1"} ${FONT_SIZE} Tf (${escapePdfString(r.text)}) Tj`).join(" ");
}

function pageContent(lines: Line[]): string {
  const body = lines.map((l, i) => (i === 0 ? "" : `0 -${LEADING} Td `) + drawLine(l)).join("\n");
  return `BT\n${LEFT} ${TOP} Td\n${body}\nET\n`;
}

/** Builds a complete PDF (bytes) with one page per entry of `pages`. */
export function buildPdf(pages: Line[][]): Buffer {
  const objects: string[] = [];
  const add = (body: string): number => objects.push(body);
  const catalog = add("");
  const pagesObj = add("");
  const helvetica = add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>");
  const symbol = add("<< /Type /Font /Subtype /Type1 /BaseFont /Symbol >>");
  const kids: number[] = [];
  for (const lines of pages) {
    const content = Buffer.from(pageContent(lines), "latin1");
    const stream = add(`<< /Length ${content.length} >>\nstream\n${content.toString("latin1")}endstream`);
    kids.push(
      add(
        `<< /Type /Page /Parent ${pagesObj} 0 R /MediaBox [0 0 612 792] /Contents ${stream} 0 R ` +
          `/Resources << /Font << /F1 ${helvetica} 0 R /F2 ${symbol} 0 R >> >> >>`,
      ),
    );
  }
  objects[catalog - 1] = `<< /Type /Catalog /Pages ${pagesObj} 0 R >>`;
  objects[pagesObj - 1] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(" ")}] /Count ${kids.length} >>`;

  let out = "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n";
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, "latin1"));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, "latin1");
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) out += `${String(off).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}
