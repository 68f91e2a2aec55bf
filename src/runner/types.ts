import type { ImageRecord, PythonEnv } from "../env/types.js";
import type { EnvSpec } from "../env/spec.js";
import type { Environment } from "../manifest/types.js";

export type { ImageRecord, PythonEnv };

/** `auto` takes docker (daemon answers, the task's image exists), else bwrap (it works here), else local. */
export type SandboxChoice = "auto" | "docker" | "bwrap" | "none";
export const SANDBOX_CHOICES: readonly SandboxChoice[] = ["auto", "docker", "bwrap", "none"];
export type BackendName = "docker" | "bwrap" | "local";

/** What runs the grader's tests: pytest (python/lmr_harness) or Node's built-in runner (node/lmr-harness). */
export type TestRunner = "pytest" | "node-test";

export type TestStatus = "passed" | "failed" | "error" | "skipped";

export interface TestCaseResult {
  /** pytest node id-ish: `file::Class::test`. */
  id: string;
  status: TestStatus;
  time_s: number;
  message?: string;
}

/**
 * What one run of the grader tests against one tree produced.
 * `passed`: every test passed; `failed`: collected fine, at least one test failed;
 * `error`: collection/import error or no tests ran; `timeout`: wall limit hit;
 * `infra`: our side broke (missing interpreter/package, sandbox failure).
 */
export type RunStatus = "passed" | "failed" | "error" | "timeout" | "infra";

/**
 * A third-party top-level module that code under the run root imported:
 * `installed` (site-packages or the system), `stand-in` (a module object with no
 * file, e.g. put in sys.modules by the grader's conftest), `tree`/`grader` (a file
 * of the tree or the grader shadows the name), `missing` (the import failed).
 */
export interface ImportedModule {
  module: string;
  /** The first file under the run root that imported it, relative to the root. */
  importer: string;
  origin: "installed" | "stand-in" | "tree" | "grader" | "missing";
  /** The installed distribution that provides it, where Python knows. */
  dist?: string;
}

/** sys.modules at the end of a run, as a fork server must set it up before it forks (see the harness's loaded_modules). */
export interface LoadedModules {
  /** Installed and standard modules, in the order they were first imported. */
  modules: string[];
  /** Names the run left mapped to None. */
  blocked: string[];
  /** Names that were not the installed module of that name: the tree's and grader's modules, and fakes. */
  stand_ins: string[];
}

export interface RunOutcome {
  status: RunStatus;
  tests: TestCaseResult[];
  counts: { passed: number; failed: number; errors: number; skipped: number };
  exit_code: number | null;
  duration_s: number;
  backend: BackendName;
  python: { path: string; version: string };
  /** Combined stdout/stderr of the test process (truncated), for logs only; never used for the verdict. */
  log: string;
  /** Raw JUnit XML as written by pytest (outside the tree under test). */
  junit_xml?: string;
  /** Why, for infra/timeout/error. */
  reason?: string;
  /** What the sandbox actually enforced on this run. */
  isolation?: Isolation;
  /** The scratch copy, present only when `keepDir` asked to keep it. */
  scratch_dir?: string;
  /** With `reportImports`: what the tree's and grader's code imported. */
  imports?: ImportedModule[];
  /** With reportImports: the environment variables the run left changed (a fork server imports under them). */
  env_changes?: { set: Record<string, string>; unset: string[] };
  /** With reportImports: what the run had loaded at its end, as a fork server must reproduce it. */
  loaded_modules?: LoadedModules;
  /** With reportImports: the same for the candidate (the code under test's side), and what its set-up changed in the environment. */
  candidate_loaded_modules?: LoadedModules;
  candidate_env_changes?: { set: Record<string, string>; unset: string[] };
  /** With `traceLines`: test id → file → the 1-based lines it executed. */
  lines?: Record<string, Record<string, number[]>>;
  /** Docker runs: the image the tests ran in. */
  image?: ImageRecord;
  /** Modules the tests could not import that the tree does not provide (docker runs: the image lacks them). */
  missing_modules?: string[];
}

export interface Isolation {
  network: "off" | "on";
  /**
   * `minimal`: the process saw the system folders read-only, its interpreter and its run's own
   * folders, nothing else of the host (bwrap, docker); `none`: a plain process that sees the host.
   */
  filesystem: "minimal" | "none";
  /** How memory was capped: a memory cgroup (it counts tmpfs pages too), or an address-space cap and tmpfs sizes. */
  memory?: "cgroup" | "rlimit";
  /** The cap on what the code under test may write: its tree's and /tmp's tmpfs sizes (MiB). */
  disk_mb?: number;
  /** Address-space cap (all backends); docker also caps the container's memory cgroup at the same size. */
  memory_mb: number;
  /** Docker: the CPU quota (--cpus). */
  cpus?: number;
  /** Docker: the uid the tests ran as (never 0). */
  uid?: number;
  /** How the process count was capped: a pids cgroup, RLIMIT_NPROC (not enforced for root), or not at all. */
  pids: "cgroup" | "rlimit" | "none";
}

/**
 * What one tool process did: `lmr record`'s harness run as a subprocess, or a python command
 * in a task image (runPythonInImage, runRecordInImage).
 */
export interface ProcessRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** The last PROCESS_OUTPUT_TAIL characters of stdout and stderr together (the driver's prints, tracebacks). */
  output: string;
  duration_s: number;
}

/** How much of a tool process's output a ProcessRun keeps. */
export const PROCESS_OUTPUT_TAIL = 8000;

export interface RunRequest {
  /** The tree under test (a workspace with the submission applied). Never modified: the runner copies it. */
  tree: string;
  /** Grader folder (tests/ + fixtures/), copied in at `mount` AFTER the tree, so the grader always wins. */
  grader: string;
  /**
   * Files written over the tree copy before the grader goes in (relative path → content):
   * a submission's target files, the reference, a mutant. The tree itself stays untouched.
   */
  overlay?: Record<string, string>;
  /** Where the grader goes in the copy (relative; default "lmr_tests"). */
  mount?: string;
  /**
   * Default "pytest". "node-test": the grader's node:test files run under node/lmr-harness with
   * the Node that runs lmr (`python` is then that Node), on the host backends only.
   */
  testRunner?: TestRunner;
  /** Test paths relative to the grader folder (default: the whole mount). */
  testPaths?: string[];
  /** Test ids (as the run reports them, `<mount>/…`) left out of the run (pytest's --deselect; pytest runs only). */
  deselect?: string[];
  python: PythonEnv;
  sandbox?: SandboxChoice;
  /** Where the run happens, resolved once per task (resolveRunTarget): when given, `sandbox` is not consulted. */
  target?: RunTarget;
  /** Wall limit for the whole run; the process group is killed when it passes. */
  timeoutTotalS: number;
  /** Per-test limit: a soft alarm fails the test; a test still running `grace` seconds later gets the run killed. */
  timeoutPerTestS?: number;
  /** Address-space limit (prlimit --as), default 4096. */
  memoryMb?: number;
  /** OMP/MKL/OpenBLAS/NumExpr/... thread caps, default 1. */
  threads?: number;
  /** Default false: no network where the sandbox can take it away (bwrap). */
  network?: boolean;
  pytestArgs?: string[];
  /** Extra pytest plugins (`-p NAME` in pytestArgs) the integrity check should accept. */
  allowPlugins?: string[];
  /** Maximum processes (pids cgroup when writable, else RLIMIT_NPROC), default 256. */
  maxProcs?: number;
  /** Folders to hide (empty tmpfs) inside the bwrap sandbox, e.g. the task folder holding the reference. */
  hidePaths?: string[];
  /** Keep the scratch copy for debugging; its path is in the outcome. */
  /**
   * Remove the scratch copy and the emptied cgroups after returning (the processes are gone
   * before it returns in any case): the caller must await settleDeferred() before it ends.
   */
  deferCleanup?: boolean;
  keepDir?: boolean;
  /** Report the third-party modules the tree and grader import (trusted runs: verify's reference). */
  reportImports?: boolean;
  /** Tree files (relative) whose executed lines are reported per test (trusted runs: verify's reference). */
  traceLines?: string[];
  /** Test ids (as reported, `<mount>/…::name`) to run first, in this order. */
  firstTests?: string[];
  /** Stop at the first failing test (pytest --maxfail=1): the verdict is failed, the rest unreported. */
  stopAtFirstFailure?: boolean;
  /** The task's environment: names the image a docker run uses (default: debian:bookworm, nothing added). */
  environment?: Readonly<Environment>;
  /** Docker: CPUs the container may use (default: `threads`). */
  cpus?: number;
  /**
   * Docker: what an import of a module the tree does not provide and the image
   * lacks makes of the run. `infra` (default): the environment is incomplete,
   * the reason names the module and the manifest fields. `error`: graders of
   * untrusted submissions, where the import may be the submission's own.
   */
  missingModule?: "infra" | "error";
  /** Folder the scratch copy is made in (default os.tmpdir()), so a caller can sweep what a killed run left. */
  scratchParent?: string;
  /**
   * Grader files (relative to `grader`) the candidate may see: its set-up (`candidateSetup`,
   * run before the code under test is imported) and helper modules probes import. Never
   * fixtures or tests: the candidate sees inputs, not answers.
   */
  candidateFiles?: string[];
  candidateSetup?: string;
  /** Modules of the tree (the targets') the candidate imports before the first test starts its clock. */
  warmModules?: string[];
  /** Size of the candidate's /tmp tmpfs (MiB) under bwrap and docker, default 512. */
  tmpMb?: number;
  /** MiB the code under test may write into its tree copy beyond the tree's own size (bwrap, docker), default 512. */
  diskMb?: number;
}

export interface WrapOptions {
  /** Host paths bound read-only at their own path (the interpreter's prefix, the toolkit's harness, the grader copy). */
  readOnly: string[];
  /** Host paths bound writable at their own path (a tree copy, the bridge's socket folder). */
  writable: string[];
  /** Host paths bound read-only at another path inside (a tree's source, copied into its sized tmpfs). */
  readOnlyAt?: { src: string; dest: string }[];
  /** Size-capped tmpfs mounts inside the sandbox (MiB): /tmp, /dev/shm, a tree's folder. */
  tmpfs: { path: string; sizeMb: number }[];
  /** The working folder inside. */
  chdir: string;
  network: boolean;
}

export interface Backend {
  name: BackendName;
  available(): Promise<boolean>;
  /** The argv that runs `cmd` under this backend. */
  wrap(cmd: string[], opts: WrapOptions): string[];
  /** What this backend enforces, for the outcome record. */
  describe(opts: WrapOptions): Pick<Isolation, "network" | "filesystem">;
}

/** The image a docker run uses, resolved from the task's environment. */
export interface DockerTarget {
  tag: string;
  /** The image id (sha256:…): what `docker run` is given, so the record names exactly what ran. */
  id: string;
  digest: string | null;
  /** The interpreter tests run with: the venv's python, or for a node-test image its node. */
  python: string;
  /** What is known before the harness says hello: the spec's Python, or "node" (the image's Debian nodejs). */
  pythonVersion: string;
  spec: EnvSpec;
  gpu: boolean;
}

/**
 * Where a task's runs happen, decided once per task: the backend that runs them, the
 * interpreter (or Node) they run with, on the host or in the task's image, and why. verify,
 * eval and the fork servers take this object; nothing re-decides from the `--sandbox` string
 * run by run, and keys and records name what ran (`docker` and an image id, `bwrap`,
 * `local`), never `auto`.
 */
export interface RunTarget {
  backend: BackendName;
  python: PythonEnv;
  /** docker: the image the runs use. */
  image?: DockerTarget;
  runner: TestRunner;
  /** Why this backend (what `auto` found, or that it was asked for). */
  reason: string;
}
