export { runTests } from "./run-tests.js";
export { resolvePython, probePython, envKey, type ResolvePythonOptions } from "./python-env.js";
export { selectBackend, probeBwrap, bwrapBackend, localBackend } from "./backends.js";
export type * from "./types.js";
