import type { LineRef, MaskMode } from "../manifest/types.js";

/** What to mask in one file. */
export interface MaskSpec {
  symbol: string;
  mode: MaskMode;
  /** Disambiguates a symbol defined more than once: the 1-based line of its `def`/`class`. */
  line?: number;
  /** Mode "region": lines (inclusive) inside the target's body. */
  region?: { start: LineRef; end: LineRef };
}

/** One masked target, with the reference text it replaced. */
export interface MaskedTarget {
  symbol: string;
  mode: MaskMode;
  /** 1-based, inclusive: the lines of the whole definition in the *original* file. */
  start_line: number;
  end_line: number;
  /** Exact original text of every replaced span (one per method for mode "class"). */
  reference: string[];
  /** UTF-8 byte ranges [start, end) in the original file of the replaced spans. */
  byte_ranges: [number, number][];
}

export interface MaskResult {
  /** The masked source. */
  source: string;
  targets: MaskedTarget[];
}

export interface SymbolInfo {
  /** Qualified name (`f`, `A.m`, `outer.inner`). */
  name: string;
  kind: "function" | "method" | "class";
  line: number;
  end_line: number;
  /** Header text from the `def`/`async`/`class` keyword to the `:` (decorators not included). */
  signature: string;
  /** Source text of the docstring literal, quotes and prefix included. */
  docstring?: string;
  /** 1-based line of the first decorator, when decorated. */
  decorator_line?: number;
  /** UTF-8 byte offsets: start of the definition (first decorator), end of its header (after the `:`), end of the definition. */
  bytes?: { start: number; header_end: number; end: number };
}

/** One language's masker. Pure: takes and returns source text, no file system. */
export interface Masker {
  readonly language: string;
  readonly extensions: readonly string[];
  mask(source: string, specs: MaskSpec[], file?: string): Promise<MaskResult>;
  listSymbols(source: string): Promise<SymbolInfo[]>;
}
