export { buildBundle } from "./build.js";
export { findReferenceCopies, isTrivialLine, normaliseLine, MIN_RUN, type ReferenceText } from "./reference-copies.js";
export { removeLeftovers, type LeftoverContext } from "./remove-leftovers.js";
export { copyGraderFiles, hashTaskInputs, listGraderFiles } from "./task-inputs.js";
export * from "./types.js";
