export { runTests } from "./run-tests.js";
export { resolvePython, envKey } from "../env/python-env.js";
export { selectBackend, probeBwrap, setBackendNotice } from "./backends.js";
export { dockerImageOf, findDockerTarget, forgetDockerTargets } from "./docker/image.js";
export { sweepStaleContainers } from "./docker/sweep.js";
export { resolveRunNode, resolveRunPython } from "./run-python.js";
export { nodeRuntime } from "../env/node-env.js";
export type * from "./types.js";
export { runPythonInImage } from "./docker/exec.js";
