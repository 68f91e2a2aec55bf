import type { Node } from "../lang/python-parser.js";

/** How a name gets bound; "variable" covers assignments, loop and with/except targets, walrus. */
type BindKind = "param" | "variable" | "import" | "def";

export interface NameEvent {
  name: string;
  op: "load" | "store";
  /** Start index (JS string index) of the identifier. */
  index: number;
  /** Where a store takes effect (after its right-hand side, before a loop body); `index` for loads. */
  at: number;
  /** [start, end) of the innermost block (or except clause, or module) the identifier is in: a store covers later loads inside it. */
  region: [number, number];
  bind?: BindKind;
}

const REGIONS = new Set(["block", "module", "except_clause"]);

function regionOf(n: Node): [number, number] {
  for (let p = n.parent; p; p = p.parent) if (REGIONS.has(p.type)) return [p.startIndex, p.endIndex];
  return [0, Number.MAX_SAFE_INTEGER];
}

const NESTED_SCOPES = new Set([
  "function_definition",
  "class_definition",
  "lambda",
  "list_comprehension",
  "set_comprehension",
  "dictionary_comprehension",
  "generator_expression",
]);

/**
 * Name loads and stores of a scope's code, in (roughly) evaluation order:
 * right-hand sides before targets, loop iterables before loop targets. Nested
 * scopes (defs, lambdas, comprehensions) contribute their name (a store) and
 * the names they read from outside (loads), not their locals.
 */
export function collectNameEvents(nodes: Node[]): NameEvent[] {
  const out: NameEvent[] = [];
  const load = (n: Node): void => {
    out.push({ name: n.text, op: "load", index: n.startIndex, at: n.startIndex, region: regionOf(n) });
  };
  const store = (n: Node, bind: BindKind, at: number): void => {
    out.push({ name: n.text, op: "store", index: n.startIndex, at, region: regionOf(n), bind });
  };

  function target(n: Node | null, at: number, bind: BindKind = "variable"): void {
    if (!n) return;
    switch (n.type) {
      case "identifier":
        store(n, bind, at);
        return;
      case "attribute":
        walk(n.childForFieldName("object"));
        return;
      case "subscript":
        walk(n.childForFieldName("value"));
        for (const s of n.childrenForFieldName("subscript")) walk(s);
        return;
      default:
        // tuples, lists, patterns, splats, parenthesized targets
        for (const c of n.namedChildren) target(c, at, bind);
    }
  }

  function walk(n: Node | null): void {
    if (!n) return;
    switch (n.type) {
      case "identifier":
        load(n);
        return;
      case "comment":
      case "string_start":
      case "string_content":
      case "string_end":
      case "global_statement":
      case "nonlocal_statement":
        return;
      case "attribute":
        walk(n.childForFieldName("object"));
        return;
      case "keyword_argument":
        walk(n.childForFieldName("value"));
        return;
      case "assignment": {
        walk(n.childForFieldName("right"));
        walk(n.childForFieldName("type"));
        target(n.childForFieldName("left"), n.endIndex);
        return;
      }
      case "augmented_assignment": {
        walk(n.childForFieldName("left"));
        walk(n.childForFieldName("right"));
        target(n.childForFieldName("left"), n.endIndex);
        return;
      }
      case "named_expression":
        walk(n.childForFieldName("value"));
        target(n.childForFieldName("name"), n.endIndex);
        return;
      case "for_statement":
        walk(n.childForFieldName("right"));
        target(n.childForFieldName("left"), n.childForFieldName("right")?.endIndex ?? n.startIndex);
        walk(n.childForFieldName("body"));
        walk(n.childForFieldName("alternative"));
        return;
      case "as_pattern": {
        // `with x as y`, `except E as e`
        for (const c of n.namedChildren) if (c && c.type !== "as_pattern_target") walk(c);
        const alias = n.childForFieldName("alias");
        if (alias) for (const c of alias.namedChildren) target(c, n.endIndex);
        return;
      }
      case "import_statement":
        for (const name of n.childrenForFieldName("name")) bindImport(name, true);
        return;
      case "import_from_statement":
        for (const name of n.childrenForFieldName("name")) bindImport(name, false);
        return;
      case "decorated_definition":
        for (const c of n.namedChildren) walk(c);
        return;
    }
    if (NESTED_SCOPES.has(n.type)) {
      nested(n);
      return;
    }
    for (const c of n.namedChildren) walk(c);
  }

  function bindImport(name: Node, plain: boolean): void {
    if (name.type === "aliased_import") {
      const alias = name.childForFieldName("alias");
      if (alias) store(alias, "import", name.endIndex);
    } else {
      // `import a.b` binds `a`; `from m import b` binds `b`
      const ids = name.namedChildren.filter((c): c is Node => c?.type === "identifier");
      const id = plain ? ids[0] : ids[ids.length - 1];
      if (id) store(id, "import", name.endIndex);
    }
  }

  function nested(n: Node): void {
    const params = n.childForFieldName("parameters");
    // Defaults, annotations, decorators and base classes are evaluated outside.
    if (params) for (const p of params.namedChildren) if (p) outsideParts(p);
    if (n.type === "class_definition") walk(n.childForFieldName("superclasses"));
    walk(n.childForFieldName("return_type"));
    const inner = collectScopeEvents(n);
    const bound = new Set(inner.filter((e) => e.op === "store").map((e) => e.name));
    for (const e of inner) if (e.op === "load" && !bound.has(e.name)) out.push(e);
    const name = n.childForFieldName("name");
    if (name && (n.type === "function_definition" || n.type === "class_definition")) store(name, "def", n.endIndex);
  }

  function outsideParts(p: Node): void {
    walk(p.childForFieldName("value"));
    walk(p.childForFieldName("type"));
  }

  for (const n of nodes) walk(n);
  return out;
}

/** Events of the inside of a scope node (def, lambda, comprehension): parameters are stores first. */
export function collectScopeEvents(scope: Node): NameEvent[] {
  const events: NameEvent[] = [];
  const params = scope.childForFieldName("parameters");
  if (params)
    for (const n of parameterNames(params))
      events.push({ name: n.text, op: "store", index: n.startIndex, at: n.startIndex, region: [scope.startIndex, scope.endIndex], bind: "param" });
  if (scope.type === "function_definition" || scope.type === "class_definition" || scope.type === "lambda") {
    events.push(...collectNameEvents([scope.childForFieldName("body")].filter((b): b is Node => b !== null)));
    return events;
  }
  // Comprehension: the for-clauses bind, everything else reads.
  const parts: Node[] = [];
  for (const c of scope.namedChildren) {
    if (!c) continue;
    if (c.type === "for_in_clause") {
      events.push(...collectNameEvents([c.childForFieldName("right")].filter((b): b is Node => b !== null)));
      const left = c.childForFieldName("left");
      if (left)
        for (const id of identifiersIn(left))
          events.push({ name: id.text, op: "store", index: id.startIndex, at: c.endIndex, region: [scope.startIndex, scope.endIndex], bind: "variable" });
    } else parts.push(c);
  }
  events.push(...collectNameEvents(parts));
  return events;
}

/** Identifier nodes a parameter list binds (`x`, `x: int`, `x=1`, `*args`, `**kw`). */
function parameterNames(params: Node): Node[] {
  const out: Node[] = [];
  for (const p of params.namedChildren) {
    if (!p) continue;
    if (p.type === "identifier") out.push(p);
    else if (p.type === "default_parameter" || p.type === "typed_default_parameter") {
      const n = p.childForFieldName("name");
      if (n) out.push(...identifiersIn(n));
    } else if (p.type === "typed_parameter" || p.type === "list_splat_pattern" || p.type === "dictionary_splat_pattern") {
      const id = p.namedChildren.find((c) => c?.type === "identifier" || c?.type === "list_splat_pattern" || c?.type === "dictionary_splat_pattern");
      if (id) out.push(...identifiersIn(id));
    } else if (p.type === "tuple_pattern") out.push(...identifiersIn(p));
  }
  return out;
}

function identifiersIn(n: Node): Node[] {
  if (n.type === "identifier") return [n];
  return n.namedChildren.flatMap((c) => (c ? identifiersIn(c) : []));
}
