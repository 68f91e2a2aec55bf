export { normaliseEnvironment, describeSpec, baseImageVariable, parseBase, baseMajorMinor, majorMinor, IMAGE_PYTHON, IMAGE_UID, DEFAULT_BASE, DEBIAN_PYTHON, type EnvSpec, type BaseName } from "./spec.js";
export { planBase, planEnv, envImageTag, BASE_REPO, ENV_REPO, ROOTFS_REPO, LABEL } from "./images.js";
export { ensureBase, ensureEnv, resolveBaseSource, failedPackage, type BuildEvent, type BuildOptions, type LayerResult } from "./build.js";
export { importRootfs, findAptMirror, type RootfsResult } from "./rootfs.js";
export { listLmrImages, pruneImages, type LmrImage, type PruneResult } from "./inventory.js";
export { probeDocker, inspectImage, forgetDockerProbe, type ImageInfo } from "./docker-cli.js";
export { loadTasksFor, groupByEnvironment, type EnvGroup } from "./tasks.js";
