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
  /** arXiv id with its version, e.g. "2305.18290v3": pins the exact PDF. */
  arxiv?: string;
  /** Where the PDF is downloaded from when there is no arXiv id (or to override the arXiv address). */
  pdf_url?: string;
  /** sha256 of the pinned PDF, with `bytes`; absent where the PDF was not reachable when the task was made. */
  sha256?: string;
  bytes?: number;
  /** Paper text shipped with the task (paper.json {page: text}): only for papers we wrote (examples, tests). */
  text?: string;
}

/** core: LMR-Bench's published tasks; extended: further papers; method: the paper's method where a core task's target is glue. */
export type TaskSet = "core" | "extended" | "method";

/** What the agent's workspace leaves out beyond the masked targets. */
interface WorkspaceSpec {
  /** Upstream files or folders removed from the workspace, with why. */
  remove?: { path: string; reason: string }[];
  /** Symbols masked besides the targets, not graded (e.g. another task's target in the same file). */
  mask?: { file: string; symbol: string; mode?: "body" | "class"; reason: string }[];
  /** Python comments and docstrings stripped (a symbol's, or a whole file's), with why: upstream prose that states the method. */
  strip?: { file: string; symbol?: string; reason: string }[];
}

/** Upstream code: a git URL at a commit, or a local folder (examples and tests). */
export type Upstream = { repo: string; commit: string; license: string; subdir?: string } | { path: string; commit?: string; license: string; subdir?: string };

interface NotebookToModuleStep {
  kind: "notebook-to-module";
  /** Notebook path inside the upstream tree. */
  notebook: string;
  /** What to take, in order: 0-based indices among *code* cells, or parts of them; omitted = all code cells. */
  cells?: NotebookCellSpec[];
  /** Module path to write inside the upstream tree. */
  out: string;
}

/**
 * Part of one code cell: lines `start`..`end` of the cell (1-based, as the notebook stores
 * it; default the first and last line), and with `main` placed under
 * `if __name__ == "__main__":` so that importing the module does not run it.
 */
interface NotebookCellPart {
  /** 0-based index among code cells. */
  cell: number;
  start?: LineRef;
  end?: LineRef;
  main?: boolean;
}

export type NotebookCellSpec = number | NotebookCellPart;

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
  /** Put the module's top-level script code under `if __name__ == "__main__":`, so importing the file runs only imports and definitions. */
  main_guard?: boolean;
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
interface TaskRecordSpec {
  /** Python driver file, relative to the task dir (default for `--driver-file`). */
  driver?: string;
  /** Calls recorded per target (default 50); the rest are only counted. */
  max_calls?: number;
  /** Scripts that write fixtures a driver cannot record; each lists the files it writes. */
  generators?: FixtureGenerator[];
}

/** A committed script, run against the reference like a driver, that writes fixture files into $LMR_FIXTURES_OUT. */
interface FixtureGenerator {
  script: string;
  outputs: string[];
}

/** `lmr record` settings for one target. */
interface TargetRecordSpec {
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
  /** "pytest" (default) or "node-test" (node:test files, TypeScript/JavaScript targets). */
  runner?: "pytest" | "node-test";
  /** Extra pytest arguments. */
  pytest_args?: string[];
  /** Grader files the candidate process (where the code under test runs) may see. */
  candidate?: CandidateSpec;
}

/**
 * What of the grader the candidate gets: never tests or fixtures, only set-up code and the
 * helpers probes import. Each path is also one of tests.files (so it is a grader file).
 */
interface CandidateSpec {
  /** Runs in the candidate before the code under test is imported (stand-ins for modules it imports). */
  setup?: string;
  /** Modules the set-up or the tests' probes import there (tiny models, toy environments). */
  files?: string[];
}

interface StandIn {
  /** Dotted module name the grader conftest replaces. */
  module: string;
  reason: string;
}

interface PatchedAttribute {
  /** Dotted path: installed module, then attribute ("torch.compile"). */
  attribute: string;
  reason: string;
}

export interface Environment {
  python: string;
  /** Image base: "debian:bookworm" (default), "debian:trixie" or "python:X.Y-slim". */
  base?: string;
  /** Debian packages (e.g. python3-torch): installed in the image; on the host they must already be there. */
  system_packages?: string[];
  /** pip requirements, pinned. */
  requirements: string[];
  /** Modules the grader's conftest.py replaces with stand-ins, with why. */
  stand_ins?: StandIn[];
  /** Attributes of installed modules the candidate set-up replaces (e.g. torch.compile), with why. */
  patches?: PatchedAttribute[];
  gpu: boolean;
  network: boolean;
}

interface VerificationPolicy {
  runs?: number;
  mutants?: number;
  min_kill_ratio?: number;
  /** Mutants that cannot change a result, by id, with why: a survivor among them is left out of the kill ratio. */
  equivalent_mutants?: { id: string; reason: string }[];
  /** Independently written solutions under alternatives/ that must pass (default 2). */
  min_alternatives?: number;
  /** Reference lines that legitimately appear elsewhere upstream, with why. */
  allowed_leaks?: { file: string; reason: string; task?: string }[];
}

interface Provenance {
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
  /** Default "core". */
  set?: TaskSet;
  upstream: Upstream;
  prepare?: PrepareStep[];
  workspace?: WorkspaceSpec;
  targets: Target[];
  /** Instruction file, relative to the task dir (usually instruction.md): the paper level. */
  instruction: string;
  /** The hinted level (usually hints.md): the paper level plus the method spelled out. */
  hints?: string;
  /** Whether the targets are the paper's method or glue around it, and why. */
  kind?: "method" | "glue";
  kind_reason?: string;
  /** Why a paper-level instruction may reveal more of the reference than the giveaway threshold (what it reveals is the contract). */
  giveaway?: { allow: string };
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
