import type { PythonEnv } from "./types.js";

/**
 * The runtime a node:test run uses: the Node that runs lmr (task images have no Node yet,
 * so these runs are host-only). Shaped as a PythonEnv so the run and its record stay one type.
 */
export function nodeRuntime(): PythonEnv {
  return { path: process.execPath, version: `node ${process.versions.node}`, prefixes: [] };
}
