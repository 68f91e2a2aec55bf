import { readFileSync } from "node:fs";

/**
 * A process's start time (clock ticks since boot, /proc/PID/stat field 22): with the pid it
 * tells a live owner from a reused pid. undefined where the process is gone or there is no /proc.
 */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // comm (field 2) may hold spaces and parentheses: count fields after the last ')'.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}
