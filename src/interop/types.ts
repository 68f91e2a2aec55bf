import type { Category, TaskManifest } from "../manifest/types.js";

/** Something wrong in an imported benchmark folder: what, where, and whether the importer fixed it. */
export interface Defect {
  /** The paper folder as given (DIR/1-DPO). */
  folder: string;
  /** JSON pointer into the folder's info.json ("" for the folder itself). */
  key: string;
  message: string;
  /** True when the importer repaired it; false when a person must act (the task may be skipped). */
  repaired: boolean;
}

/** A task the importer could not write, and why (the defects say more). */
export interface SkippedTask {
  folder: string;
  /** The task id, when it got that far. */
  id?: string;
  reason: string;
}

/** Per repository URL: the commit to pin and, optionally, facts info.json lacks. */
export interface RepoFacts {
  commit: string;
  paper_url?: string;
  year?: number;
  license?: string;
}

export interface ImportOptions {
  /** Repository URL → commit SHA (or facts), as read from --commit-map. */
  commitMap?: Record<string, RepoFacts>;
  /** Category for implementations whose category is missing or not one of the nine. */
  defaultCategory?: Category;
  /** Replace existing task folders. */
  force?: boolean;
  /** Report only; write nothing into outDir. */
  dryRun?: boolean;
  /** provenance.author of the written tasks (default "lmr import"). */
  author?: string;
  /** Clock for provenance.created (tests). */
  now?: () => Date;
}

export interface ImportResult {
  /** Manifests of the tasks written (or that would be written, with dryRun). */
  tasks: TaskManifest[];
  /** Absolute folders written (empty with dryRun). */
  written: string[];
  skipped: SkippedTask[];
  defects: Defect[];
}
