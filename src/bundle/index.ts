export { buildBundle } from "./build.js";
export { scanWorkspace, type LeakReference } from "./leak-scan.js";
export { hashTaskInputs } from "./task-inputs.js";
export * from "./types.js";
