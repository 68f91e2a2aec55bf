import { isDeepStrictEqual } from "node:util";

/*
 * Edits string lists of task.json (tests.files, tests.fixtures) in the text
 * itself, so the author's layout survives: key order, inline arrays, compact
 * objects. Only the changed list is touched, in the style it already has.
 */

interface Span {
  start: number;
  end: number;
}
interface Member {
  key: string;
  keySpan: Span;
  value: Node;
}
type Node = (Span & { kind: "object"; members: Member[] }) | (Span & { kind: "array"; items: Node[] }) | (Span & { kind: "scalar" });

/** Positions of every value in (valid) JSON text. */
function parseSpans(text: string): Node {
  let i = 0;
  const space = (): void => {
    while (i < text.length && " \t\r\n".includes(text[i]!)) i++;
  };
  const str = (): Span => {
    const start = i++;
    while (text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    return { start, end: ++i };
  };
  const value = (): Node => {
    space();
    const start = i;
    if (text[i] === "{") {
      i++;
      const members: Member[] = [];
      for (space(); text[i] !== "}"; space()) {
        if (text[i] === ",") {
          i++;
          space();
        }
        const keySpan = str();
        space();
        i++; // ':'
        members.push({ key: JSON.parse(text.slice(keySpan.start, keySpan.end)) as string, keySpan, value: value() });
      }
      return { kind: "object", members, start, end: ++i };
    }
    if (text[i] === "[") {
      i++;
      const items: Node[] = [];
      for (space(); text[i] !== "]"; space()) {
        if (text[i] === ",") i++;
        items.push(value());
      }
      return { kind: "array", items, start, end: ++i };
    }
    if (text[i] === '"') return { kind: "scalar", ...str() };
    while (i < text.length && !",]} \t\r\n".includes(text[i]!)) i++;
    return { kind: "scalar", start, end: i };
  };
  return value();
}

function member(node: Node | undefined, key: string): Member | undefined {
  return node?.kind === "object" ? node.members.find((m) => m.key === key) : undefined;
}

/** The whitespace that starts the line holding `offset`. */
function indentAt(text: string, offset: number): string {
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))![0];
}

function splice(text: string, start: number, end: number, insert: string): string {
  return text.slice(0, start) + insert + text.slice(end);
}

export interface ListEdit {
  /** Object path of the list, e.g. ["tests", "files"]; the parent object must exist. */
  path: string[];
  add?: string[];
  remove?: string[];
}

function findArray(text: string, path: string[]): Extract<Node, { kind: "array" }> {
  let node: Node | undefined = parseSpans(text);
  for (const key of path) node = member(node, key)?.value;
  if (node?.kind !== "array") throw new Error(`task.json /${path.join("/")} is not a list`);
  return node;
}

/** Applies one list edit to the text, keeping its layout; unchanged text when nothing changes. */
function editList(text: string, edit: ListEdit): string {
  const root = parseSpans(text);
  let parent: Node | undefined = root;
  for (const key of edit.path.slice(0, -1)) parent = member(parent, key)?.value;
  if (parent?.kind !== "object") throw new Error(`task.json has no object at /${edit.path.slice(0, -1).join("/")}`);
  const listKey = edit.path[edit.path.length - 1]!;
  const found = member(parent, listKey);
  const add = [...new Set(edit.add ?? [])];
  if (!found) {
    if (add.length === 0) return text;
    const last = parent.members[parent.members.length - 1];
    const rendered = `${JSON.stringify(listKey)}: [${add.map((s) => JSON.stringify(s)).join(", ")}]`;
    if (!last) return splice(text, parent.start + 1, parent.end - 1, rendered);
    // After the member it belongs with in the schema's order: "fixtures" follows "files".
    const anchor = parent.members.find((m) => m.key === "files") ?? last;
    const multiline = text.slice(parent.start, parent.end).includes("\n");
    const sep = multiline ? `,\n${indentAt(text, anchor.keySpan.start)}` : ", ";
    return splice(text, anchor.value.end, anchor.value.end, sep + rendered);
  }
  if (found.value.kind !== "array") throw new Error(`task.json /${edit.path.join("/")} is not a list`);
  const drop = new Set(edit.remove ?? []);
  let out = text;
  // One removal per pass, re-reading positions after each.
  for (;;) {
    const arr = findArray(out, edit.path);
    const k = arr.items.findIndex((n) => drop.has(JSON.parse(out.slice(n.start, n.end)) as string));
    if (k < 0) break;
    const item = arr.items[k]!;
    const prev = arr.items[k - 1];
    const next = arr.items[k + 1];
    if (prev) out = splice(out, prev.end, item.end, "");
    else if (next) out = splice(out, item.start, next.start, "");
    else out = splice(out, arr.start + 1, arr.end - 1, "");
  }
  const arr = findArray(out, edit.path);
  const values = arr.items.map((n) => JSON.parse(out.slice(n.start, n.end)) as unknown);
  const fresh = add.filter((s) => !values.includes(s));
  if (fresh.length === 0) return out;
  const multiline = out.slice(arr.start, arr.end).includes("\n");
  const lastItem = arr.items[arr.items.length - 1];
  if (!lastItem || !multiline) {
    const at = lastItem ? lastItem.end : arr.start + 1;
    const body = fresh.map((s) => JSON.stringify(s)).join(", ");
    return lastItem ? splice(out, at, at, `, ${body}`) : splice(out, arr.start, arr.end, `[${body}]`);
  }
  const indent = indentAt(out, lastItem.start);
  return splice(out, lastItem.end, lastItem.end, fresh.map((s) => `,\n${indent}${JSON.stringify(s)}`).join(""));
}

/** The same edits on parsed JSON: what the text must mean afterwards. */
function applyToValue(value: Record<string, unknown>, edit: ListEdit): void {
  let parent = value;
  for (const key of edit.path.slice(0, -1)) parent = parent[key] as Record<string, unknown>;
  const key = edit.path[edit.path.length - 1]!;
  const drop = new Set(edit.remove ?? []);
  const list = ((parent[key] as string[] | undefined) ?? []).filter((s) => !drop.has(s));
  for (const s of edit.add ?? []) if (!list.includes(s)) list.push(s);
  if (parent[key] !== undefined || list.length > 0) parent[key] = list;
}

/**
 * Edits string lists of a manifest's text. Layout is kept where the text edit
 * provably means the same as the edit on parsed JSON; otherwise (an unusual
 * layout) the manifest is re-printed with 2-space indentation, keys in order.
 */
export function editManifestLists(text: string, edits: ListEdit[]): string {
  const expected = JSON.parse(text) as Record<string, unknown>;
  for (const e of edits) applyToValue(expected, e);
  let out = text;
  try {
    for (const e of edits) out = editList(out, e);
    if (isDeepStrictEqual(JSON.parse(out), expected)) return out;
  } catch {
    // fall through to re-printing
  }
  return JSON.stringify(expected, null, 2) + "\n";
}
