import { isDeepStrictEqual } from "node:util";

/*
 * Writes paper.sha256 and paper.bytes into task.json as a text edit, so the
 * author's layout survives: only those two members change or appear, after the
 * last paper member they belong after, in the style of the paper object
 * (one member per line, or inline).
 */

interface Span {
  start: number;
  end: number;
}
interface Member {
  key: string;
  keyStart: number;
  value: Span;
}

/** Members of the object value of top-level `key`, with positions; undefined when it is not an object. */
function objectMembers(text: string, key: string): { object: Span; members: Member[] } | undefined {
  let i = 0;
  const space = (): void => {
    while (i < text.length && " \t\r\n".includes(text[i]!)) i++;
  };
  const skipString = (): void => {
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    i++;
  };
  const skipValue = (): void => {
    space();
    const c = text[i];
    if (c === '"') return skipString();
    if (c === "{" || c === "[") {
      const close = c === "{" ? "}" : "]";
      i++;
      for (space(); text[i] !== close; space()) {
        if (text[i] === ",") {
          i++;
          continue;
        }
        skipValue();
        space();
        if (text[i] === ":") {
          i++;
          skipValue();
        }
      }
      i++;
      return;
    }
    while (i < text.length && !",]} \t\r\n".includes(text[i]!)) i++;
  };
  const readMembers = (): Member[] => {
    const members: Member[] = [];
    i++; // '{'
    for (space(); text[i] !== "}"; space()) {
      if (text[i] === ",") {
        i++;
        continue;
      }
      const keyStart = i;
      skipString();
      const name = JSON.parse(text.slice(keyStart, i)) as string;
      space();
      i++; // ':'
      space();
      const start = i;
      skipValue();
      members.push({ key: name, keyStart, value: { start, end: i } });
    }
    i++;
    return members;
  };
  space();
  if (text[i] !== "{") return undefined;
  const top = readMembers();
  const found = top.find((m) => m.key === key);
  if (!found || text[found.value.start] !== "{") return undefined;
  i = found.value.start;
  const members = readMembers();
  return { object: { start: found.value.start, end: i }, members };
}

const ORDER = ["title", "url", "year", "venue", "text", "arxiv", "pdf_url", "sha256", "bytes"];

/**
 * task.json text with paper.sha256 and paper.bytes set. Layout is kept where
 * the edit provably means the same as setting the values on parsed JSON;
 * otherwise the manifest is re-printed with 2-space indentation.
 */
export function setPaperPin(text: string, pin: { sha256: string; bytes: number }): string {
  const expected = JSON.parse(text) as { paper: Record<string, unknown> };
  expected.paper = { ...expected.paper, sha256: pin.sha256, bytes: pin.bytes };
  try {
    const out = editText(text, pin);
    if (isDeepStrictEqual(JSON.parse(out), expected)) return out;
  } catch {
    // fall through to re-printing
  }
  return JSON.stringify(expected, null, 2) + "\n";
}

function editText(text: string, pin: { sha256: string; bytes: number }): string {
  let out = text;
  for (const [key, value] of [
    ["sha256", JSON.stringify(pin.sha256)],
    ["bytes", String(pin.bytes)],
  ] as const) {
    const paper = objectMembers(out, "paper");
    if (!paper) throw new Error("no paper object");
    const existing = paper.members.find((m) => m.key === key);
    if (existing) {
      out = out.slice(0, existing.value.start) + value + out.slice(existing.value.end);
      continue;
    }
    const rendered = `${JSON.stringify(key)}: ${value}`;
    const last = paper.members[paper.members.length - 1];
    if (!last) {
      out = out.slice(0, paper.object.start + 1) + rendered + out.slice(paper.object.end - 1);
      continue;
    }
    const multiline = out.slice(paper.object.start, paper.object.end).includes("\n");
    const indentOf = (m: Member): string => /^[ \t]*/.exec(out.slice(out.lastIndexOf("\n", m.keyStart - 1) + 1))![0];
    // before the first member that follows it in the schema's order (sha256 before bytes), else last
    const next = paper.members.find((m) => ORDER.indexOf(m.key) > ORDER.indexOf(key));
    if (next) {
      const sep = multiline ? `,\n${indentOf(next)}` : ", ";
      out = out.slice(0, next.keyStart) + rendered + sep + out.slice(next.keyStart);
    } else {
      const sep = multiline ? `,\n${indentOf(last)}` : ", ";
      out = out.slice(0, last.value.end) + sep + rendered + out.slice(last.value.end);
    }
  }
  return out;
}
