import { createRequire } from "node:module";
import { Language, Parser, type Node, type Tree } from "web-tree-sitter";

const require = createRequire(import.meta.url);

let ready: Promise<Parser> | undefined;

/** One shared tree-sitter parser for Python (web-tree-sitter + the grammar's .wasm; no native build). */
export function getPythonParser(): Promise<Parser> {
  ready ??= (async () => {
    await Parser.init();
    const wasm = require.resolve("tree-sitter-python/tree-sitter-python.wasm");
    const language = await Language.load(wasm);
    const parser = new Parser();
    parser.setLanguage(language);
    return parser;
  })();
  return ready;
}

export async function parsePython(source: string): Promise<Tree> {
  const parser = await getPythonParser();
  const tree = parser.parse(source);
  if (!tree) throw new Error("tree-sitter returned no tree");
  return tree;
}

/** First ERROR or MISSING node, if the tree has one. */
export function findSyntaxError(root: Node): Node | undefined {
  if (!root.hasError) return undefined;
  const stack: Node[] = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.isError || n.isMissing) return n;
    if (n.hasError) for (let i = n.childCount - 1; i >= 0; i--) stack.push(n.child(i)!);
  }
  return root;
}

export type { Node, Tree };
