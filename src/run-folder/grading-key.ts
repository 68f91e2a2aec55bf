import { sha256 } from "../core/hash.js";

export interface GradingKeyInput {
  model: string;
  /** Hash of the submission's content for the target files ("none" without one). */
  submissionHash: string;
  /** The bundle's workspace, grader and task hashes. */
  bundleHashes: unknown;
  sandbox: string;
  /** The interpreter asked for ("" for the default). */
  python: string;
  toolkitVersion: string;
}

/**
 * The resume key of one sample: everything that decides its verdict. A rerun
 * reuses a result.json only when its grading_key is this value. The model is
 * in it so a result can never be taken for another model's, even when two
 * models submitted the same patch.
 */
export function computeGradingKey(input: GradingKeyInput): string {
  const { model, submissionHash, bundleHashes, sandbox, python, toolkitVersion } = input;
  return sha256(JSON.stringify({ model, submissionHash, bundle: bundleHashes, sandbox, python, toolkit: toolkitVersion }));
}
