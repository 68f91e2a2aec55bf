export { importLmrBench } from "./lmr-bench-import.js";
export { readCommitMap } from "./commit-map.js";
export { forEachBuiltTask, selectTaskDirs, type BuiltTask } from "./export-tasks.js";
export { exportLmrBenchTask, renderDockerfile, type LmrBenchExport } from "./export-lmr-bench.js";
export { makeJsonlRow, renderJsonl, type JsonlRow } from "./export-jsonl.js";
export { detectLicense, isRedistributable } from "../manifest/license.js";
export { deriveTaskId, slugify } from "../manifest/task-id.js";
export { parseRequirements } from "./requirements.js";
export * from "./types.js";
