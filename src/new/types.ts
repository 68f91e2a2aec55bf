import type { TaskManifest } from "../manifest/types.js";

/** `lmr new` flags, as the command line gives them (strings, not yet checked). */
export interface NewFlags {
  paperTitle?: string;
  paperUrl?: string;
  /** The paper's PDF (its sha256 is pinned and the file cached), or a paper.json of text by page (local example upstreams only). */
  paperPdf?: string;
  /** Where the PDF is downloaded from (paper.pdf_url), e.g. a PDF in the upstream repository at the pinned commit. */
  pdfUrl?: string;
  year?: string;
  venue?: string;
  repo?: string;
  commit?: string;
  file?: string;
  symbol?: string;
  /** Line of the def/class, for a symbol defined more than once. */
  line?: string;
  mode?: string;
  regionStart?: string;
  regionEnd?: string;
  category?: string;
  id?: string;
  license?: string;
  author?: string;
  tasksDir?: string;
  mirror?: string;
  yes?: boolean;
}

export interface Choice<T> {
  name: string;
  value: T;
  description?: string;
}

/**
 * How the wizard asks a question. `validate` returns an error message or
 * undefined; the interactive implementation re-asks until it is undefined.
 */
export interface Asker {
  text(q: { message: string; default?: string; validate?: (raw: string) => Promise<string | undefined> }): Promise<string>;
  select<T>(q: { message: string; choices: Choice<T>[]; default?: T }): Promise<T>;
  /** A list filtered by what the user types. */
  search<T>(q: { message: string; choices: Choice<T>[] }): Promise<T>;
  confirm(q: { message: string; default?: boolean }): Promise<boolean>;
}

export interface NewEnv {
  /** Folder relative paths (flags, --tasks-dir) are resolved from. */
  cwd: string;
  /** Present when questions may be asked (a terminal, no --yes); absent = flags only. */
  ask?: Asker;
  /** Progress and notes for a person (stderr). */
  note?: (line: string) => void;
  /** Today as YYYY-MM-DD (tests pin it). */
  today?: string;
}

export interface NewResult {
  /** Absolute task folder. */
  taskDir: string;
  manifest: TaskManifest;
  /** Files written, relative to the task folder. */
  files: string[];
  /** Licence detected from the upstream's licence file, or undefined when none was recognised. */
  detectedLicense?: string;
  /** What to do next, in order. */
  next: NextStep[];
}

/** One step after \`lmr new\`: an lmr command to run (args after "lmr"), or something to do by hand. */
export interface NextStep {
  /** Arguments after \`lmr\`, when the step is a command. */
  lmr?: string[];
  /** The step as a person reads it (the command line, or what to edit). */
  text: string;
  why: string;
}
