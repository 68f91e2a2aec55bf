/**
 * A small XML 1.0 well-formedness check for tests: one root, properly nested
 * tags, quoted and unique attributes, only the five predefined or numeric
 * entities, no forbidden characters. Returns element counts by name.
 */
export interface XmlCheck {
  ok: boolean;
  error?: string;
  root?: string;
  counts: Record<string, number>;
}

const NAME = "[A-Za-z_:][-A-Za-z0-9_.:]*";
const ENTITY = /&(?:lt|gt|amp|apos|quot|#[0-9]+|#x[0-9A-Fa-f]+);/y;
const FORBIDDEN = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
const OPEN = new RegExp(`^<(${NAME})((?:\\s+${NAME}\\s*=\\s*(?:"[^"]*"|'[^']*'))*)\\s*(/?)>$`);
const ATTR = new RegExp(`(${NAME})\\s*=\\s*(?:"([^"]*)"|'([^']*)')`, "g");
const CLOSE = new RegExp(`^</(${NAME})\\s*>$`);

export function checkXml(xml: string): XmlCheck {
  const counts: Record<string, number> = {};
  const fail = (error: string): XmlCheck => ({ ok: false, error, counts });
  if (FORBIDDEN.test(xml)) return fail("forbidden character");
  let i = 0;
  const decl = /^<\?xml\s[^?]*\?>/.exec(xml);
  if (decl) i = decl[0].length;
  const stack: string[] = [];
  let root: string | undefined;
  while (i < xml.length) {
    const lt = xml.indexOf("<", i);
    const textEnd = lt === -1 ? xml.length : lt;
    const bad = checkText(xml.slice(i, textEnd), stack.length === 0);
    if (bad) return fail(`${bad} at ${i}`);
    if (lt === -1) break;
    const gt = xml.indexOf(">", lt);
    if (gt === -1) return fail(`unclosed tag at ${lt}`);
    const tag = xml.slice(lt, gt + 1);
    i = gt + 1;
    const close = CLOSE.exec(tag);
    if (close) {
      if (stack.pop() !== close[1]) return fail(`mismatched </${close[1]}> at ${lt}`);
      continue;
    }
    const open = OPEN.exec(tag);
    if (!open) return fail(`malformed tag ${tag.slice(0, 60)} at ${lt}`);
    const name = open[1] ?? "";
    if (stack.length === 0) {
      if (root !== undefined) return fail(`second root element <${name}>`);
      root = name;
    }
    const seen = new Set<string>();
    for (const a of (open[2] ?? "").matchAll(ATTR)) {
      if (seen.has(a[1] ?? "")) return fail(`duplicate attribute ${a[1]} on <${name}>`);
      seen.add(a[1] ?? "");
      const value = a[2] ?? a[3] ?? "";
      if (value.includes("<")) return fail(`'<' in attribute ${a[1]} of <${name}>`);
      const badEntity = checkEntities(value);
      if (badEntity) return fail(`${badEntity} in attribute ${a[1]}`);
    }
    counts[name] = (counts[name] ?? 0) + 1;
    if (open[3] !== "/") stack.push(name);
  }
  if (stack.length > 0) return fail(`unclosed <${stack.at(-1)}>`);
  if (root === undefined) return fail("no root element");
  return { ok: true, root, counts };
}

function checkText(text: string, outside: boolean): string | undefined {
  if (outside && text.trim() !== "") return "text outside the root element";
  return checkEntities(text);
}

function checkEntities(text: string): string | undefined {
  for (let j = text.indexOf("&"); j !== -1; j = text.indexOf("&", j + 1)) {
    ENTITY.lastIndex = j;
    if (!ENTITY.test(text)) return "bare or unknown entity '&'";
  }
  if (text.includes("]]>")) return "']]>' in text";
  return undefined;
}
