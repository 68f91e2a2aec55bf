import { cp, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { EXAMPLE_TASKS, UPSTREAMS } from "./git-fixture.js";

// Manifests are edited as plain JSON here, including into invalid shapes.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type EditManifest = (manifest: any) => void | Promise<void>;

/**
 * Copies example task `id` to ROOT/tasks/<id> and its fixture upstream to
 * ROOT/upstreams/<name>, points the manifest at that copy (so the relative path
 * resolves inside ROOT), then lets `edit` change the manifest (an edit that gives it a URL
 * upstream also drops paper.text and its file). Returns the task folder.
 */
export async function copyTask(root: string, id: string, edit: EditManifest = () => {}): Promise<string> {
  const taskDir = join(root, "tasks", id);
  // a local upstream must stay inside the task's project; package.json marks ROOT as one
  await writeFile(join(root, "package.json"), "{}\n");
  await cp(join(EXAMPLE_TASKS, id), taskDir, { recursive: true });
  const manifest = JSON.parse(await readFile(join(taskDir, "task.json"), "utf8"));
  const name = String(manifest.upstream.path).split("/").pop()!;
  await cp(join(UPSTREAMS, name), join(root, "upstreams", name), { recursive: true });
  manifest.upstream.path = `../../upstreams/${name}`;
  await edit(manifest);
  // an example turned into a URL upstream is no longer one of ours: its paper text goes, as validate requires
  if (typeof manifest.upstream?.repo === "string" && typeof manifest.paper?.text === "string") {
    await rm(join(taskDir, manifest.paper.text), { force: true });
    delete manifest.paper.text;
  }
  await writeFile(join(taskDir, "task.json"), JSON.stringify(manifest, null, 2) + "\n");
  return taskDir;
}
