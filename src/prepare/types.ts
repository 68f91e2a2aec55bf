import type { PrepareStep } from "../manifest/types.js";

/** What one prepare step did. */
export interface PrepareStepReport {
  index: number;
  kind: PrepareStep["kind"];
  /** The file written, relative to the tree. */
  file: string;
  /** notebook-to-module: code cells taken, lines and cells dropped as IPython-only. */
  cells?: number[];
  dropped_lines?: number;
  dropped_cells?: number[];
  /** extract-function: 1-based lines of the block in the file before the step, the new def's line after it, and the call. */
  start_line?: number;
  end_line?: number;
  def_line?: number;
  call?: string;
  /** extract-function with main_guard: 1-based line ranges of the result put under `if __name__ == "__main__":`. */
  guarded?: Array<[number, number]>;
}

export interface PrepareReport {
  steps: PrepareStepReport[];
}

/** Context for error messages: the task.json the steps come from. */
export interface PrepareContext {
  file: string;
}
