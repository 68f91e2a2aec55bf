/** Paper text by page: "1" → text of page 1 (the shape of LMR-Bench's paper.json). */
export interface PaperPages {
  pages: Record<string, string>;
}

/** One place in the paper where a search term occurs. */
export interface Finding {
  /** The term as the user gave it. */
  term: string;
  /** 1-based page number. */
  page: number;
  /** 1-based line within the page where the match starts. */
  line: number;
  /** The matched line(s), whitespace collapsed, shortened around the match. */
  snippet: string;
  /** The nearest section heading at or before the match (on this page or an earlier one). */
  heading?: string;
  /** Equation numbers ("3", "2a", "4.1") labelled within ±5 lines of the match. */
  equations?: string[];
}
