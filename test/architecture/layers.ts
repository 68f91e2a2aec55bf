/**
 * The stages of src/, lowest first: a folder may import its own files and folders of
 * LOWER layers only, never one of its own layer or a higher one (issue 26: the folders show
 * the flow). Read it as the path a task takes: the manifest names an upstream (source),
 * its paper and the prepared, masked target; bundle builds the workspace; runner grades;
 * record, verify and evaluate use the runner; report, generate, judge, agent and queue
 * work on evaluate's run folders; interop exports/imports whole tasks; scaffold and new
 * write new tasks; src/index.ts (the library API) and cli/ sit on top.
 *
 * A new folder must be placed here (the import-direction test fails until it is), and
 * a layer's folders must not import one another: when two need to, one of them belongs
 * lower, or the shared part belongs in a third folder below both.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ["core"],
  ["lang", "llm"],
  ["manifest"],
  ["source"],
  ["paper", "prepare"],
  ["mask", "env"],
  ["bundle"],
  ["runner"],
  ["run-folder", "record"],
  ["verify"],
  ["evaluate"],
  ["report"],
  ["generate", "agent"],
  ["judge", "queue"],
  ["interop"],
  ["scaffold"],
  ["new"],
  ["(root)"],
  ["cli"],
];

/** The layer name of files directly under src/ (src/index.ts, the library API). */
export const ROOT_AREA = "(root)";
