export { importLmrBench } from "./import/lmr-bench.js";
export { readCommitMap } from "./import/commit-map.js";
export { forEachBuiltTask, selectTaskDirs, type BuiltTask } from "./export/tasks.js";
export { exportLmrBenchTask, renderDockerfile, type LmrBenchExport } from "./export/lmr-bench.js";
export { makeJsonlRow, renderJsonl, type JsonlRow } from "./export/jsonl.js";
export { detectLicense, isRedistributable } from "../manifest/license.js";
export { deriveTaskId, slugify } from "../manifest/task-id.js";
export { parseRequirements } from "./import/requirements.js";
export * from "./types.js";
