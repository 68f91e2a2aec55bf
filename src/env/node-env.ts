import type { PythonEnv } from "./types.js";

/**
 * The runtime a node:test run uses on the host backends: the Node that runs lmr (under
 * docker it is the image's, see resolveRunNode). Shaped as a PythonEnv so the run and its
 * record stay one type.
 */
export function nodeRuntime(): PythonEnv {
  return { path: process.execPath, version: `node ${process.versions.node}`, prefixes: [] };
}
