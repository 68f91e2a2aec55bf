export type { Summary } from "./types.js";
export { validateSummary } from "./validate-summary.js";
