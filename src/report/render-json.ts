import type { Summary } from "./types.js";

/** The Summary itself, exactly as summary.json holds it. */
export function renderJson(summary: Summary): string {
  return JSON.stringify(summary, null, 2) + "\n";
}
