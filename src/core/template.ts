import { LmrError } from "./errors.js";

/*
 * A small logic-less template language for the files `lmr` scaffolds:
 *   {{name}}                 the value (dotted names look into objects)
 *   {{#name}}…{{/name}}      shown when the value is truthy; repeated for each item of a list
 *                            (inside, an item's fields shadow the outer ones; {{.}} is the item)
 *   {{^name}}…{{/name}}      shown when the value is falsy or an empty list
 *   {{! comment }}           dropped
 * A tag alone on its line (section tags, comments) takes its line with it,
 * so templates can be laid out one tag per line without leaving blank lines.
 */

type TemplateValue = string | number | boolean | undefined | null | TemplateData | TemplateValue[];
export interface TemplateData {
  [key: string]: TemplateValue;
}

type Node = { kind: "text"; text: string } | { kind: "var"; name: string } | { kind: "section"; name: string; inverted: boolean; children: Node[] };

const TAG = /\{\{([#^/!]?)\s*([^}]*?)\s*\}\}/g;

export function renderTemplate(template: string, data: TemplateData, file = "template"): string {
  return renderNodes(parseTemplate(template, file), [data]);
}

function parseTemplate(template: string, file = "template"): Node[] {
  const text = dropStandaloneLines(template);
  const root: Node[] = [];
  const stack: { name: string; children: Node[] }[] = [{ name: "", children: root }];
  let last = 0;
  for (const m of text.matchAll(TAG)) {
    const top = stack[stack.length - 1]!;
    if (m.index > last) top.children.push({ kind: "text", text: text.slice(last, m.index) });
    last = m.index + m[0].length;
    const [, sigil, name = ""] = m;
    if (sigil === "!") continue;
    if (sigil === "#" || sigil === "^") {
      const node: Node = { kind: "section", name, inverted: sigil === "^", children: [] };
      top.children.push(node);
      stack.push({ name, children: node.children });
    } else if (sigil === "/") {
      if (stack.length === 1 || top.name !== name) {
        throw new LmrError({
          code: "instruction/template-invalid",
          file,
          message: `{{/${name}}} closes ${stack.length === 1 ? "nothing" : `{{#${top.name}}}`}`,
          hint: "fix the template's section tags",
        });
      }
      stack.pop();
    } else {
      top.children.push({ kind: "var", name });
    }
  }
  if (stack.length > 1)
    throw new LmrError({
      code: "instruction/template-invalid",
      file,
      message: `{{#${stack[stack.length - 1]!.name}}} is never closed`,
      hint: "add the closing {{/…}} tag",
    });
  if (last < text.length) root.push({ kind: "text", text: text.slice(last) });
  return root;
}

/** Removes the line of a section or comment tag that is alone on its line (only whitespace around it). */
function dropStandaloneLines(template: string): string {
  return template.replace(/^[ \t]*(\{\{[#^/!][^}]*\}\})[ \t]*\r?\n/gm, "$1");
}

function lookup(name: string, scopes: TemplateValue[]): TemplateValue {
  if (name === ".") return scopes[scopes.length - 1];
  const [head, ...rest] = name.split(".");
  for (let i = scopes.length - 1; i >= 0; i--) {
    const scope = scopes[i];
    if (scope !== null && typeof scope === "object" && !Array.isArray(scope) && head! in scope) {
      let v: TemplateValue = scope[head!];
      for (const key of rest) v = v !== null && typeof v === "object" && !Array.isArray(v) ? v[key] : undefined;
      return v;
    }
  }
  return undefined;
}

function isTruthy(v: TemplateValue): boolean {
  if (Array.isArray(v)) return v.length > 0;
  return v !== undefined && v !== null && v !== false && v !== "" && v !== 0;
}

function renderNodes(nodes: Node[], scopes: TemplateValue[]): string {
  let out = "";
  for (const node of nodes) {
    if (node.kind === "text") out += node.text;
    else if (node.kind === "var") {
      const v = lookup(node.name, scopes);
      out += v === undefined || v === null || typeof v === "object" ? "" : String(v);
    } else {
      const v = lookup(node.name, scopes);
      if (node.inverted) {
        if (!isTruthy(v)) out += renderNodes(node.children, scopes);
      } else if (Array.isArray(v)) {
        for (const item of v) out += renderNodes(node.children, [...scopes, item]);
      } else if (isTruthy(v)) {
        out += renderNodes(node.children, typeof v === "object" ? [...scopes, v] : scopes);
      }
    }
  }
  return out;
}
