import type { StrippedEntry } from "./workspace-strip.js";
import type { InstructionLevel } from "../manifest/level.js";
import type { MaskMode } from "../manifest/types.js";
import type { MaterializedSource, SourceOptions } from "../source/types.js";
import type { Leak } from "./leak-scan.js";
import type { BundlePaper, PaperBundleOptions } from "./paper.js";

/** Version of the bundle.json layout below. */
export const BUNDLE_SCHEMA_VERSION = 1;

/** File names inside a bundle folder (`OUT/<task-id>/`): the contract with verify and eval. */
export const BUNDLE_FILES = {
  workspace: "workspace",
  reference: "reference",
  grader: "grader",
  /** Independently written solutions, grader-side: never inside the workspace or the grader mount. */
  alternatives: "alternatives",
  manifest: "bundle.json",
} as const;

export interface BundleTarget {
  file: string;
  symbol: string;
  mode: MaskMode;
  /** 1-based, inclusive: the whole definition in the prepared (unmasked) file. */
  start_line: number;
  end_line: number;
}

export type RemovalReason =
  /** `.git` folder or file (submodule pointer). */
  | "vcs"
  /** `__pycache__/`, `*.pyc`, `*.pyo`: compiled reference code. */
  | "bytecode"
  /** `.ipynb_checkpoints/`: Jupyter's autosaved copies. */
  | "notebook-checkpoint"
  /** A byte-identical copy of a prepared target file (e.g. `trainers_backup.py`). */
  | "copy-of-target"
  /** The notebook a `notebook-to-module` step turned into a target module. */
  | "prepare-source"
  /** Listed in the manifest's `workspace.remove`. */
  | "manifest";

export interface RemovedEntry {
  /** Path relative to the workspace; folders end with "/". */
  path: string;
  reason: RemovalReason;
  /** For "copy-of-target" and "prepare-source": the target file it duplicates or produced. */
  of?: string;
  /** For "manifest": the reason the manifest gives. */
  why?: string;
}

/** bundle.json. */
export interface BundleManifest {
  schema_version: number;
  task_id: string;
  toolkit_version: string;
  /** The toolkit build that made the bundle (src/core/toolkit-identity.ts). */
  toolkit_hash?: string;
  built_at: string;
  upstream: {
    location: string;
    origin: MaterializedSource["origin"];
    commit: string | null;
    /** Files of the commit that the object store lacked (mirror snapshots omit large blobs). */
    missing?: string[];
  };
  targets: BundleTarget[];
  /** Names of the alternatives under alternatives/, sorted. */
  alternatives: string[];
  hashes: {
    /** task.json, instruction, paper text, test files and fixtures (paths relative to the task folder). */
    task: string;
    workspace: string;
    reference: string;
    /** The grader folder, and the alternatives when the task has any (both decide what verify proves). */
    grader: string;
  };
  removed: RemovedEntry[];
  /** Comments and docstrings the manifest's `workspace.strip` took out, per entry. */
  stripped?: StrippedEntry[];
  /** What the leak scan found in the workspace (copies of the reference, leftovers); warnings here, `lmr verify` decides. */
  leaks: Leak[];
  /**
   * The instruction level workspace/instruction.md holds (absent in bundles of older lmr: paper).
   * hashes.workspace always covers the paper-level instruction, so both levels grade alike.
   */
  level?: InstructionLevel;
  /** The paper in the workspace (paper.pdf, paper.md): not part of hashes.workspace. */
  paper?: BundlePaper;
  /** Problems worth a word that did not stop the build (e.g. the pinned paper is not available). */
  warnings?: string[];
}

/** What `buildBundle` returns: bundle.json plus where it went and how big it is. */
export interface BundleInfo extends BundleManifest {
  /** Absolute path of the bundle folder. */
  dir: string;
  files: { workspace: number; reference: number; grader: number };
}

export interface BundleOptions extends SourceOptions, Omit<PaperBundleOptions, "cacheDir"> {
  /** Clock for `built_at` (tests). */
  now?: () => Date;
  /** The instruction the workspace gets (default "paper"). */
  level?: InstructionLevel;
}
