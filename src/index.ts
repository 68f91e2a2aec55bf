/**
 * lmr as a library: the functions the CLI's commands call, for scripts and other tools.
 * Each `lmr <command>` parses its flags and calls one of these; what it prints is their result.
 * Errors are thrown as {@link LmrError} (a stable `code` from {@link ERROR_CODES}, whose kind
 * gives the exit code the CLI would use); expected outcomes (a failed check) are values.
 *
 * @example
 * ```ts
 * import { findTaskDirs, validateTasks } from "lmr";
 * const report = await validateTasks(await findTaskDirs("tasks"));
 * if (!report.ok) console.log(report.problems);
 * ```
 */

// errors: one type, one table of codes
export { LmrError, EXIT, exitCodeFor, formatProblem, type LmrErrorInit, type Problem } from "./core/errors.js";
export { ERROR_CODES, isErrorCode, type ErrorCode, type ErrorKind } from "./core/error-codes.js";

// tasks: find, load, validate (`lmr validate`)
export { findTaskDirs, loadTask } from "./manifest/load.js";
export { validateTasks, type ValidationReport } from "./manifest/validate.js";
export type { ResolvedTask, TaskManifest } from "./manifest/types.js";

// masking one file (`lmr mask`)
export { maskerFor } from "./mask/registry.js";
export type { Masker, MaskSpec, SymbolInfo } from "./mask/types.js";

// bundles (`lmr build`)
export { buildBundle } from "./bundle/build.js";
export type { BundleInfo, BundleOptions } from "./bundle/types.js";

// verification (`lmr verify`): one task, or many side by side
export { verifyTask, readVerification, type VerifyOptions, type VerifyResult } from "./verify/verify-task.js";
export { verifyTasks, type VerifiedTask, type VerifyTasksOptions, type VerifyTasksResult } from "./verify/verify-tasks.js";
export type { VerificationRecord } from "./verify/record.js";

// grading submissions (`lmr eval`), the no-agent baseline (`lmr generate`), agents (`lmr agent run`), the judge (`lmr judge`)
export { runEval, type EvalOptions } from "./evaluate/run-eval.js";
export { runGenerate, type GenerateOptions } from "./generate/run-generate.js";
export { runAgents, type AgentRunOptions } from "./agent/run-agents.js";
export { runJudge, type JudgeOptions } from "./judge/run-judge.js";

// reports (`lmr report`)
export { summarizeRun, writeSummary } from "./report/summarize.js";
export { renderReport } from "./report/render.js";
export type { Summary, ReportFormat } from "./report/types.js";

// what every `--json` prints (schema/cli-envelope.schema.json)
export type { JsonEnvelope, JsonError } from "./core/json-envelope.js";
