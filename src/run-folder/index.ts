export type { RunConfig, RunModel, RunShard, SampleKey, SampleResult, Verdict } from "./types.js";
export { VERDICTS } from "./types.js";
export {
  AGENT_DIR,
  BUNDLES_DIR,
  DIFF_FILE,
  JUDGE_FILE,
  JUNIT_FILE,
  LOCK_FILE,
  LOG_FILE,
  RESULT_FILE,
  RESULTS_DIR,
  RUN_FILE,
  RUN_LAYOUT,
  SAMPLE_ID,
  SCRATCH_DIR,
  SUMMARY_FILE,
  compareIds,
  describeSampleKey,
  locateSample,
  locateSampleDir,
  nameModelFolder,
} from "./layout.js";
export { computeGradingKey } from "./grading-key.js";
export { checkSampleResult, isRecord } from "./check-result.js";
export { TASK_SETS, TASK_SET_CHOICES, isInSet, readTaskSet, type TaskSetChoice } from "./task-set.js";
export { listSampleFolders, readSampleResult } from "./read-results.js";
export {
  JUDGE_CLASSES,
  JUDGE_FILE_VERSION,
  checkSampleJudgement,
  readSampleJudgement,
  type JudgeClass,
  type JudgeVote,
  type SampleJudgement,
} from "./judge-file.js";
