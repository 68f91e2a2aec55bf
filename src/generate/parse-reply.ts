/** A fenced code block of a model's reply: its info string's language (lower case, may be "") and its text. */
export interface CodeBlock {
  lang: string;
  code: string;
  /** 1-based, among all the reply's blocks. */
  index: number;
}

const FENCE = /^[ \t]{0,3}(`{3,}|~{3,})[ \t]*([^\n`]*)\n([\s\S]*?)^[ \t]{0,3}\1[`~]*[ \t]*$/gm;

/**
 * The reply's fenced code blocks, in order. A reply with no fence at all is
 * taken as one unlabelled block when a line opens a definition (some models
 * answer with bare code), so `def`/`class`/`function` decides, not the fence. An
 * unclosed last fence (a reply cut by max_tokens) yields its text too.
 */
export function extractCodeBlocks(reply: string): CodeBlock[] {
  const text = reply.replace(/\r\n/g, "\n");
  const blocks: CodeBlock[] = [];
  let lastEnd = 0;
  for (const m of text.matchAll(FENCE)) {
    blocks.push({ lang: (m[2] ?? "").trim().split(/\s+/)[0]!.toLowerCase(), code: m[3] ?? "", index: blocks.length + 1 });
    lastEnd = m.index + m[0].length;
  }
  const open = /^[ \t]{0,3}(`{3,}|~{3,})[ \t]*([^\n`]*)\n([\s\S]*)$/m.exec(text.slice(lastEnd));
  if (open) blocks.push({ lang: (open[2] ?? "").trim().split(/\s+/)[0]!.toLowerCase(), code: open[3] ?? "", index: blocks.length + 1 });
  // Bare code only when a line opens a definition ("def f(", "class A:", "function f("): prose that
  // starts a line with "from" or "import" is not code.
  if (
    blocks.length === 0 &&
    /^[ \t]*(?:(?:async[ \t]+)?def[ \t]+\w+[ \t]*\(|class[ \t]+\w+[ \t]*[(:]|(?:export[ \t]+)?(?:async[ \t]+)?function[ \t]+\w+[ \t]*\()/m.test(text)
  )
    blocks.push({ lang: "", code: text, index: 1 });
  return blocks;
}

const LANGS: Record<string, string[]> = {
  ".py": ["python", "py", "python3", "py3"],
  ".ts": ["typescript", "ts"],
  ".tsx": ["tsx", "typescript", "ts"],
  ".js": ["javascript", "js", "mjs"],
  ".jsx": ["jsx", "javascript", "js"],
};

/** Blocks in the file's language or unlabelled; all of them when none is labelled so (a model that writes ```text). */
export function selectBlocks(blocks: CodeBlock[], extension: string): CodeBlock[] {
  const names = LANGS[extension.toLowerCase()] ?? [];
  const fitting = blocks.filter((b) => b.lang === "" || names.includes(b.lang));
  return fitting.length > 0 ? fitting : blocks;
}
