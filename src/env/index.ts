export { normaliseEnvironment, describeSpec, baseImageVariable, parseBase, baseMajorMinor, DEFAULT_BASE, type BaseName } from "./spec.js";
export { planBase, planEnv, envImageTag } from "./images.js";
export { ensureBase, ensureEnv, resolveBaseSource, type BuildEvent } from "./build.js";
export { importRootfs } from "./rootfs.js";
export { listLmrImages, pruneImages, type LmrImage } from "./inventory.js";
export { probeDocker } from "./docker-cli.js";
export { loadTasksFor, groupByEnvironment, type EnvGroup } from "./tasks.js";
