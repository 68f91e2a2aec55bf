export { runTests } from "./run-tests.js";
export { resolvePython, probePython, envKey, type ResolvePythonOptions } from "../env/python-env.js";
export { selectBackend, probeBwrap, bwrapBackend, localBackend, dockerBackend, parseSandboxChoice, setBackendNotice } from "./backends.js";
export { dockerImageOf, findDockerTarget, forgetDockerTargets, type DockerTarget } from "./docker/image.js";
export { sweepStaleContainers } from "./docker/sweep.js";
export { resolveRunNode, resolveRunPython } from "./run-python.js";
export { nodeRuntime } from "../env/node-env.js";
export type * from "./types.js";
export { runPythonInImage, runRecordInImage } from "./docker/exec.js";
