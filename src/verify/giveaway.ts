/**
 * The giveaway score: how much of a reference body an instruction reveals. A task measures
 * reproducing the paper only when its paper-level instruction leaves the method to the paper;
 * this counts the body's distinctive content that the instruction spells out. Pure: text in,
 * score out; works on Python and TypeScript/JavaScript bodies alike (a small lexer, no parser:
 * the instruction is prose with code spans, which no grammar reads).
 *
 * The body's features, each counted once:
 * - call: a called name that is not everyday vocabulary (`logsigmoid`, `F.kl_div`, `torch.fft.rfft`);
 * - chain: an attribute chain of two or more names (`self.args.alpha`, `outputs.logits`);
 * - const: a numeric literal other than 0, 1, 2, -1 and their float forms, or a string literal;
 * - op: an operator between two named quantities (`beta * logits`, `chosen - rejected`), in either order.
 * A feature is revealed when the instruction holds it: the name (calls), the chain, the literal,
 * or both operands joined by the same operator. Besides, each code fence of the instruction is
 * compared line by line with the body: the share of the body's lines that a fence repeats.
 * The score is the larger of the two shares.
 */

export interface GiveawayResult {
  /** In [0, 1]: the larger of `features` and `fenced`. */
  score: number;
  /** Revealed features / (the body's distinctive features + 2): a body of few features is not judged on one word. */
  features: number;
  /** The body's lines (normalised, of 12+ characters) that the instruction's code fences repeat / all such lines. */
  fenced: number;
  /** How many distinctive features the bodies have. */
  total: number;
  /** The revealed ones, `kind:text`, sorted (what a reviewer reads to see why the score is high). */
  revealed: string[];
}

/** Above this, a paper-level instruction spells out too much of the method (unless the manifest's giveaway.allow says why). */
export const GIVEAWAY_THRESHOLD = 0.3;

type Token = { kind: "name" | "num" | "str" | "op" | "punct"; text: string };

/** Names every language and every paper uses: not evidence of anything when an instruction says them. */
const COMMON = new Set([
  "self",
  "this",
  "cls",
  "super",
  "None",
  "True",
  "False",
  "null",
  "undefined",
  "true",
  "false",
  "return",
  "if",
  "else",
  "elif",
  "for",
  "while",
  "in",
  "not",
  "and",
  "or",
  "is",
  "def",
  "class",
  "lambda",
  "const",
  "let",
  "var",
  "function",
  "new",
  "import",
  "from",
  "as",
  "with",
  "try",
  "except",
  "finally",
  "raise",
  "throw",
  "yield",
  "await",
  "async",
  "pass",
  "break",
  "continue",
  "of",
  "typeof",
  "instanceof",
  "len",
  "range",
  "enumerate",
  "zip",
  "list",
  "dict",
  "set",
  "tuple",
  "int",
  "float",
  "str",
  "bool",
  "print",
  "isinstance",
  "sorted",
  "reversed",
  "min",
  "max",
  "sum",
  "abs",
  "round",
  "any",
  "all",
  "map",
  "filter",
  "getattr",
  "setattr",
  "hasattr",
  "type",
  "iter",
  "next",
  "format",
  "append",
  "extend",
  "pop",
  "items",
  "keys",
  "values",
  "get",
  "update",
  "copy",
  "join",
  "split",
  "strip",
  "replace",
  "startswith",
  "endswith",
  "lower",
  "upper",
  "push",
  "length",
  "slice",
  "forEach",
  "reduce",
  "Math",
  "Array",
  "Object",
  "String",
  "Number",
  "Map",
  "Set",
  "JSON",
  "console",
  "log",
  "from",
  "fill",
  "indexOf",
  "includes",
  "concat",
  "sort",
  "floor",
  "ceil",
  "size",
  "shape",
  "dim",
  "view",
  "reshape",
  "to",
  "device",
  "dtype",
  "item",
  "tolist",
  "numpy",
  "float32",
  "float64",
  "long",
  "cpu",
  "cuda",
  "detach",
  "clone",
  "contiguous",
  "unsqueeze",
  "squeeze",
  "cat",
  "stack",
  "zeros",
  "ones",
  "tensor",
  "array",
  "arange",
  "zeros_like",
  "ones_like",
  "empty",
  "torch",
  "np",
  "nn",
  "F",
  "math",
  "os",
  "re",
  "sys",
  "mean",
  "std",
  "var",
  "exp",
  "log",
  "sqrt",
  "pow",
  "permute",
  "transpose",
  "flatten",
  "expand",
  "repeat",
  "double",
  "half",
  "numel",
  "no_grad",
  "zero_",
  "add_",
  "mul_",
  "addcmul_",
  "copy_",
  "forward",
  "backward",
  "__init__",
  "step",
  "train",
  "eval",
  "parameters",
  "named_parameters",
  "state",
  "clamp_",
  "requires_grad_",
  "to_list",
  "astype",
  "iloc",
  "loc",
  "apply",
  "head",
  "DataFrame",
  "Series",
  "Tensor",
]);
const TRIVIAL_NUMBERS = new Set(["0", "1", "2", "-1", "0.0", "1.0", "2.0", "0.", "1.", "-1.0"]);

const OPERATORS = [
  "**=",
  "//=",
  ">>=",
  "<<=",
  "===",
  "!==",
  "**",
  "//",
  "==",
  "!=",
  "<=",
  ">=",
  "+=",
  "-=",
  "*=",
  "/=",
  "%=",
  "@=",
  "->",
  "=>",
  "&&",
  "||",
  "<<",
  ">>",
  "+",
  "-",
  "*",
  "/",
  "%",
  "@",
  "<",
  ">",
  "=",
  "&",
  "|",
  "^",
  "~",
  "!",
];
const ARITHMETIC = new Set(["**", "//", "+", "-", "*", "/", "%", "@", "<", ">", "<=", ">=", "==", "!=", "===", "!=="]);

/** Prose writes operators and quantities as mathematics: read them as code would write them. */
const MATH: Record<string, string> = {
  "−": "-",
  "–": "-",
  "·": "*",
  "⋅": "*",
  "×": "*",
  "÷": "/",
  "∕": "/",
  "≤": "<=",
  "≥": ">=",
  "≠": "!=",
  α: " alpha ",
  β: " beta ",
  γ: " gamma ",
  δ: " delta ",
  ε: " eps ",
  θ: " theta ",
  λ: " lambda_ ",
  μ: " mu ",
  π: " pi ",
  σ: " sigmoid ",
  τ: " tau ",
  ϵ: " eps ",
};

/** Tokens of code or prose: names (dotted chains kept apart), numbers, string literals, operators. */
function tokenize(source: string): Token[] {
  const text = source.replace(/[−–·⋅×÷∕≤≥≠αβγδεθλμπστϵ]/g, (c) => MATH[c] ?? c);
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === "#" && (i === 0 || text[i - 1] === "\n" || /\s/.test(text[i - 1]!))) {
      // a Python comment in code; in prose a '#' heading: either way not content
      while (i < text.length && text[i] !== "\n") i++;
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < text.length && /[A-Za-z0-9_]/.test(text[j]!)) j++;
      out.push({ kind: "name", text: text.slice(i, j) });
      i = j;
      continue;
    }
    if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(text[i + 1] ?? ""))) {
      const m = /^(?:\d[\d_]*\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)/.exec(text.slice(i))!;
      out.push({ kind: "num", text: m[0].replace(/_/g, "") });
      i += m[0].length;
      continue;
    }
    if ((c === '"' || c === "'") && text.startsWith(c.repeat(3), i)) {
      // a docstring: prose about the code, not its content
      const end = text.indexOf(c.repeat(3), i + 3);
      i = end < 0 ? text.length : end + 3;
      continue;
    }
    if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      while (j < text.length && text[j] !== c && text[j] !== "\n") j += text[j] === "\\" ? 2 : 1;
      // an apostrophe in prose ("the model's") opens no string: only a closed one on the line counts
      if (text[j] === c) {
        if (c !== "`") out.push({ kind: "str", text: text.slice(i + 1, j) });
        else out.push(...tokenize(text.slice(i + 1, j)));
        i = j + 1;
        continue;
      }
      i++;
      continue;
    }
    const op = OPERATORS.find((o) => text.startsWith(o, i));
    if (op) {
      out.push({ kind: "op", text: op });
      i += op.length;
      continue;
    }
    // a full stop before a space ends a sentence of prose: it joins no attribute chain
    out.push({ kind: "punct", text: c === "." && !/[A-Za-z_]/.test(text[i + 1] ?? "") ? ". " : c });
    i++;
  }
  return out;
}

interface Operand {
  /** The operand's last name (`outputs.logits` → `logits`), or a number. */
  key: string;
}

/**
 * Distinctive features of code, as `kind:text` strings. `known` are names the contract gives anyway
 * (the target's name and parameters, names the body assigns): a call of one, or a chain that starts
 * at one (`args.beta`, `outputs.logits`), tells nothing of the method.
 */
export function codeFeatures(code: string, known: ReadonlySet<string> = new Set()): Set<string> {
  const toks = tokenize(code);
  const out = new Set<string>();
  // chains and calls
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    if (t.kind === "num") {
      const prev = toks[i - 1];
      // the sign is left out: prose says "clamped below at -50" or "a floor of 50" alike
      const neg = prev?.kind === "op" && prev.text === "-" && !isOperandEnd(toks[i - 2]);
      const text = neg ? `-${t.text}` : t.text;
      if (!TRIVIAL_NUMBERS.has(text) && !TRIVIAL_NUMBERS.has(t.text)) out.add(`const:${normalizeNumber(t.text)}`);
      continue;
    }
    // string literals are option names, keys and messages: the contract's, not the method's
    if (t.kind === "str") continue;
    if (t.kind !== "name" || (toks[i - 1]?.kind === "punct" && toks[i - 1]!.text === ".")) continue;
    const chain = [t.text];
    let j = i + 1;
    while (toks[j]?.text === "." && toks[j + 1]?.kind === "name") {
      chain.push(toks[j + 1]!.text);
      j += 2;
    }
    const called = toks[j]?.text === "(";
    const names = chain.filter((n) => n !== "self" && n !== "this");
    const viaSelf = chain[0] === "self" || chain[0] === "this";
    // a class name (`nn.Linear`, `pd.DataFrame`) is a type the contract names, not a step of the method
    if (names.length >= 2 && !known.has(names[0]!) && !viaSelf && !/^[A-Z]/.test(names[names.length - 1]!)) {
      const tail = names.slice(-2);
      if (!tail.every((n) => COMMON.has(n))) out.add(`chain:${tail.join(".")}`);
    }
    // `self.proj(x)`: a sub-module the class's visible __init__ defines
    if (called && !viaSelf) {
      const name = chain[chain.length - 1]!;
      if (!COMMON.has(name) && !known.has(name) && name.length > 2 && !/^[A-Z]/.test(name)) out.add(`call:${name}`);
    }
  }
  // operators between named quantities
  for (let i = 1; i + 1 < toks.length; i++) {
    const op = toks[i]!;
    if (op.kind !== "op" || !ARITHMETIC.has(op.text)) continue;
    const left = operandBefore(toks, i);
    const right = operandAfter(toks, i);
    if (!left || !right) continue;
    if (COMMON.has(left.key) && COMMON.has(right.key)) continue;
    if (/^\d/.test(left.key) && /^\d/.test(right.key)) continue;
    out.add(`op:${[left.key, right.key].sort().join(` ${op.text} `)}`);
  }
  return out;
}

function isOperandEnd(t: Token | undefined): boolean {
  return t !== undefined && (t.kind === "name" || t.kind === "num" || t.kind === "str" || t.text === ")" || t.text === "]");
}

function normalizeNumber(n: string): string {
  const v = Number(n);
  return Number.isFinite(v) ? String(v) : n;
}

/** The name (or number) that ends just before index i: `a.b` → b; `f(x)` and `x[0]` are not named quantities. */
function operandBefore(toks: Token[], i: number): Operand | undefined {
  const t = toks[i - 1];
  if (!t) return undefined;
  if (t.kind === "name" && !KEYWORDS.has(t.text)) return { key: t.text };
  if (t.kind === "num") return { key: normalizeNumber(t.text) };
  return undefined;
}

function operandAfter(toks: Token[], i: number): Operand | undefined {
  let j = i + 1;
  let t = toks[j];
  if (!t) return undefined;
  if (t.kind === "num") return { key: normalizeNumber(t.text) };
  if (t.kind !== "name" || KEYWORDS.has(t.text)) return undefined;
  while (toks[j + 1]?.text === "." && toks[j + 2]?.kind === "name") {
    j += 2;
    t = toks[j]!;
  }
  if (toks[j + 1]?.text === "(") return undefined;
  return { key: t.text };
}

const KEYWORDS = new Set([
  "return",
  "if",
  "else",
  "in",
  "not",
  "and",
  "or",
  "is",
  "for",
  "while",
  "lambda",
  "yield",
  "await",
  "new",
  "typeof",
  "const",
  "let",
  "var",
]);

/** What the instruction holds, in the same terms: names, chains, literals and operator pairs of its prose and code spans. */
function instructionTerms(text: string): { names: Set<string>; features: Set<string> } {
  const names = new Set(
    tokenize(text)
      .filter((t) => t.kind === "name")
      .map((t) => t.text),
  );
  const features = codeFeatures(text);
  // prose writes a number as "0.5" or "1e-8" where code had 0.5 or 1e-08: compare values
  for (const t of tokenize(text)) if (t.kind === "num") features.add(`const:${normalizeNumber(t.text)}`);
  // prose may quote a string constant without quotes ("the 'sigmoid' loss" or `sigmoid`)
  for (const n of names) features.add(`const:${JSON.stringify(n)}`);
  return { names, features };
}

function isRevealed(feature: string, terms: { names: Set<string>; features: Set<string> }): boolean {
  if (terms.features.has(feature)) return true;
  const [kind, text] = [feature.slice(0, feature.indexOf(":")), feature.slice(feature.indexOf(":") + 1)];
  if (kind === "call") return terms.names.has(text);
  return false;
}

const MIN_LINE_CHARS = 12;
const PRIOR = 2;

function normalizeLine(line: string): string {
  return line
    .trim()
    .replace(/\s+/g, " ")
    .replace(/\s*#.*$/, "")
    .replace(/\s*\/\/.*$/, "");
}

/** The code fences of a Markdown text. */
function codeFences(markdown: string): string[] {
  const out: string[] = [];
  const re = /^(`{3,}|~{3,})[^\n]*\n([\s\S]*?)^\1\s*$/gm;
  for (let m = re.exec(markdown); m; m = re.exec(markdown)) out.push(m[2]!);
  return out;
}

/**
 * Names a definition's contract gives: the defined name (`def f`, `function f`, `f(` of a method)
 * and its parameters, and the names the body binds (`x = …`, `for x in`, `const x`): locals.
 */
export function contractNames(body: string): Set<string> {
  const out = new Set<string>();
  const head = /(?:def|function|async function)?\s*([A-Za-z_$][\w$]*)\s*(?:<[^>]*>)?\s*\(/.exec(body);
  if (head) {
    out.add(head[1]!);
    const open = head.index + head[0].length;
    let depth = 1;
    let j = open;
    while (j < body.length && depth > 0) {
      if ("([{".includes(body[j]!)) depth++;
      else if (")]}".includes(body[j]!)) depth--;
      j++;
    }
    for (const part of splitTopLevel(body.slice(open, j - 1))) {
      const m = /^[\s*]*(?:readonly\s+|public\s+|private\s+)?([A-Za-z_$][\w$]*)/.exec(part);
      if (m) out.add(m[1]!);
    }
  }
  for (const m of body.matchAll(/^\s*(?:const|let|var)?\s*([A-Za-z_$][\w$]*(?:\s*,\s*[A-Za-z_$][\w$]*)*)\s*(?::[^=\n]+)?=(?!=)/gm))
    for (const n of m[1]!.split(",")) out.add(n.trim());
  for (const m of body.matchAll(/\bfor\s*\(?\s*(?:const|let|var)?\s*([A-Za-z_$][\w$]*(?:\s*,\s*[A-Za-z_$][\w$]*)*)\s+(?:in|of)\b/g))
    for (const n of m[1]!.split(",")) out.add(n.trim());
  return out;
}

function withoutDocstrings(code: string): string {
  return code.replace(/("""|\'\'\')[\s\S]*?\1/g, "");
}

/** The body after its definition line(s): defaults and annotations of the signature are the contract's. */
function withoutHeader(body: string): string {
  const open = body.indexOf("(");
  if (open < 0) return body;
  let depth = 0;
  for (let j = open; j < body.length; j++) {
    const c = body[j]!;
    if ("([{".includes(c)) depth++;
    else if (")]}".includes(c)) depth--;
    if (depth === 0) {
      const eol = body.indexOf("\n", j);
      return eol < 0 ? "" : body.slice(eol + 1);
    }
  }
  return body;
}

function splitTopLevel(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = "";
  for (const c of s) {
    if ("([{".includes(c)) depth++;
    else if (")]}".includes(c)) depth--;
    if (c === "," && depth === 0) {
      out.push(cur);
      cur = "";
    } else cur += c;
  }
  if (cur.trim() !== "") out.push(cur);
  return out;
}

/** The giveaway score of `instruction` against the reference bodies of a task's targets. */
export function scoreGiveaway(bodies: string[], instruction: string): GiveawayResult {
  const known = new Set<string>();
  for (const b of bodies) for (const n of contractNames(b)) known.add(n);
  const features = new Set<string>();
  for (const b of bodies) for (const f of codeFeatures(withoutHeader(b), known)) features.add(f);
  const terms = instructionTerms(instruction);
  const revealed = [...features].filter((f) => isRevealed(f, terms)).sort();
  const lines = bodies.flatMap((b) =>
    withoutDocstrings(withoutHeader(b))
      .split("\n")
      .map(normalizeLine)
      .filter((l) => l.length >= MIN_LINE_CHARS),
  );
  const fenceLines = new Set(codeFences(instruction).flatMap((f) => f.split("\n").map(normalizeLine)));
  const fencedCount = lines.filter((l) => fenceLines.has(l)).length;
  // a body with few features would swing between 0 and 1 on one word: PRIOR unrevealed features steady it
  const featureShare = revealed.length / (features.size + PRIOR);
  const fenced = lines.length === 0 ? 0 : fencedCount / lines.length;
  return { score: round(Math.max(featureShare, fenced)), features: round(featureShare), fenced: round(fenced), total: features.size, revealed };
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
