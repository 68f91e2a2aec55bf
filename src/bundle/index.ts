export { ALTERNATIVES_DIR, listAlternatives, type Alternative } from "./alternatives.js";
export { buildBundle } from "./build.js";
export { scanLeaks, scanWorkspace, type Leak, type LeakKind, type LeakReference, type LeakScanOptions, type LeakScanResult } from "./leak-scan.js";
export { removeLeftovers, type LeftoverContext } from "./remove-leftovers.js";
export { copyGraderFiles, hashTaskInputs, listGraderFiles } from "./task-inputs.js";
export * from "./types.js";
