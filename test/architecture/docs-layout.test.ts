import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { LAYERS } from "./layers.js";

/*
 * Issue 26, item 7: README's layout and CONTRIBUTING's "Where things live" list every folder
 * of src/ (sub-folders included) with its purpose, and nothing that is not there; and they list
 * the top folders in the order of LAYERS, the order imports follow.
 */
const SRC = resolve("src");

function folders(dir: string, rel = ""): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    const path = `${rel}${e.name}/`;
    const inside = readdirSync(join(dir, e.name));
    if (inside.length > 0) out.push(path, ...folders(join(dir, e.name), path));
  }
  return out;
}

function section(file: string, heading: string): string {
  const text = readFileSync(resolve(file), "utf8");
  const start = text.indexOf(`${heading}\n`);
  expect(start, `${file} has a "${heading}" section`).toBeGreaterThanOrEqual(0);
  const rest = text.slice(start + heading.length + 1);
  const level = heading.split(" ")[0]!;
  const end = rest.search(new RegExp(`^#{1,${level.length}} `, "m"));
  return end < 0 ? rest : rest.slice(0, end);
}

const tree = folders(SRC).sort();
const top = tree.filter((f) => f.split("/").length === 2).map((f) => f.slice(0, -1));

describe.each([
  ["README.md", "## Layout", /^src\/([\w-]+)\/ /gm],
  ["CONTRIBUTING.md", "### Where things live", /^- `src\/([\w-]+)\/`/gm],
])("%s %s", (file, heading, entry) => {
  const text = section(file, heading);
  const listed = [...text.matchAll(entry)].map((m) => m[1]!);

  it("has one entry per top folder of src/, none for a folder that is gone, in the layers' order", () => {
    expect([...listed].sort()).toEqual([...top].sort());
    const order = LAYERS.flat();
    const rank = (f: string): number => order.indexOf(f);
    expect(listed).toEqual([...listed].sort((a, b) => rank(a) - rank(b)));
  });

  it("names every sub-folder (mask/python/, interop/export/, …)", () => {
    for (const sub of tree.filter((f) => f.split("/").length > 2)) expect(text, `${file} names ${sub}`).toContain(sub);
  });
});
