/**
 * The task manifest (tasks/<id>/task.json), as TypeScript. schema/task.schema.json
 * is the authority for validation; these types mirror it and must change with it.
 */
export const CATEGORIES = [
  "Training Objectives & Optimization Techniques",
  "Decoding & Search Strategies",
  "Interpretability & Explainability",
  "Feature Learning & Representation",
  "Evaluation Metrics & Benchmarking",
  "Prompt Engineering & Instruction Tuning",
  "Data Augmentation & Generation",
  "Information Extraction & Knowledge Integration",
  "Neural Network Architectures & Modules",
] as const;
export type Category = (typeof CATEGORIES)[number];

export const SCHEMA_VERSION = 1;

export type MaskMode = "body" | "region" | "class";

/** A place in a file: a 1-based line number, or the `occurrence`-th (default first) line containing `anchor`. */
export type LineRef = { line: number } | { anchor: string; occurrence?: number };

export interface Paper {
  title: string;
  url: string;
  year: number;
  venue?: string;
  /** Optional paper text shipped with the task (paper.json {page: text}), relative to the task dir. */
  text?: string;
}

/** Upstream code: a git URL at a commit, or a local folder (examples and tests). */
export type Upstream =
  | { repo: string; commit: string; license: string; subdir?: string }
  | { path: string; commit?: string; license: string; subdir?: string };

export interface NotebookToModuleStep {
  kind: "notebook-to-module";
  /** Notebook path inside the upstream tree. */
  notebook: string;
  /** 0-based indices among *code* cells; omitted = all code cells. */
  cells?: number[];
  /** Module path to write inside the upstream tree. */
  out: string;
}

export interface ExtractFunctionStep {
  kind: "extract-function";
  /** File inside the upstream tree. */
  file: string;
  /** Qualified name of the function/method that holds the lines; omitted = module level. */
  within?: string;
  /** First and last line (inclusive) of the block to extract. */
  start: LineRef;
  end: LineRef;
  /** Name of the new function (or method, when `within` is a method and `as_method` is true). */
  name: string;
  params: string[];
  returns: string[];
  as_method?: boolean;
}

export type PrepareStep = NotebookToModuleStep | ExtractFunctionStep;

export interface Target {
  /** File inside the (prepared) upstream tree. */
  file: string;
  /** `name`, `Class.method`, `Class`, `outer.inner`. */
  symbol: string;
  mode: MaskMode;
  /** For symbols defined more than once (e.g. in if/else branches): the line of the wanted `def`/`class`. */
  line?: number;
  /** For mode "region": the lines (inclusive) inside the body to mask. */
  region?: { start: LineRef; end: LineRef };
  /** How `lmr record` captures this target's calls. */
  record?: TargetRecordSpec;
}

/** `lmr record` settings for the whole task. */
export interface TaskRecordSpec {
  /** Python driver file, relative to the task dir (default for `--driver-file`). */
  driver?: string;
  /** Calls recorded per target (default 50); the rest are only counted. */
  max_calls?: number;
}

/** `lmr record` settings for one target. */
export interface TargetRecordSpec {
  /** For methods: the `self` attributes to record before and after each call (default: all of `vars(self)`). */
  self_attrs?: string[];
  /** Overrides the task's `record.max_calls` for this target. */
  max_calls?: number;
  /** Parameters not to record (objects the codec cannot store); the replay passes their default. */
  skip_args?: string[];
  /**
   * Whether replay tests check the in-place changes the reference made to arguments
   * (default true). False when the changes are an implementation detail an agent need not copy.
   */
  check_mutations?: boolean;
}

export interface TestsSpec {
  /** Grader test files, relative to the task dir (usually tests/...). */
  files: string[];
  /** Fixture files or folders, relative to the task dir. */
  fixtures?: string[];
  /** Where the grader files go inside the workspace when tests run (default "lmr_tests"). */
  mount?: string;
  timeout_per_test_s: number;
  timeout_total_s: number;
  /** Extra pytest arguments. */
  pytest_args?: string[];
}

export interface Environment {
  python: string;
  requirements: string[];
  gpu: boolean;
  network: boolean;
}

export interface VerificationPolicy {
  runs?: number;
  mutants?: number;
  min_kill_ratio?: number;
  /** Reference lines that legitimately appear elsewhere upstream, with why. */
  allowed_leaks?: { file: string; reason: string }[];
}

export interface Provenance {
  author: string;
  created: string;
  notes?: string;
}

export interface TaskManifest {
  /** Where editors find the JSON schema; ignored by lmr. */
  $schema?: string;
  schema_version: number;
  id: string;
  paper: Paper;
  category: Category;
  upstream: Upstream;
  prepare?: PrepareStep[];
  targets: Target[];
  /** Instruction file, relative to the task dir (usually instruction.md). */
  instruction: string;
  tests: TestsSpec;
  environment: Environment;
  /** Upstream files that help the agent (pointed to in the instruction). */
  context_files?: string[];
  verification?: VerificationPolicy;
  /** How `lmr record` captures reference calls for `lmr scaffold tests`. */
  record?: TaskRecordSpec;
  provenance: Provenance;
}

/** A manifest after loading: read-only, with where it came from. Flows through every stage. */
export interface ResolvedTask {
  readonly manifest: Readonly<TaskManifest>;
  /** Absolute task directory. */
  readonly dir: string;
  /** Absolute path of task.json. */
  readonly manifestPath: string;
}

export function isUrlUpstream(u: Upstream): u is Extract<Upstream, { repo: string }> {
  return "repo" in u;
}
