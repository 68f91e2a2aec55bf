import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { copyFileAtomic, writeFileAtomic } from "./fs-atomic.js";

const dirs: string[] = [];
afterAll(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));
const tempDir = async (): Promise<string> => {
  const d = await mkdtemp(join(tmpdir(), "lmr-fs-atomic-"));
  dirs.push(d);
  return d;
};

describe("writeFileAtomic and copyFileAtomic", () => {
  it("put the whole content in place, making the folder for a write", async () => {
    const d = await tempDir();
    await writeFileAtomic(join(d, "a", "b.txt"), "one");
    await copyFileAtomic(join(d, "a", "b.txt"), join(d, "a", "c.txt"));
    expect(await readFile(join(d, "a", "c.txt"), "utf8")).toBe("one");
    expect((await readdir(join(d, "a"))).sort()).toEqual(["b.txt", "c.txt"]);
  });
  it("leave the old file and no temp file behind when the copy fails", async () => {
    const d = await tempDir();
    await writeFile(join(d, "to.txt"), "old");
    await expect(copyFileAtomic(join(d, "missing.txt"), join(d, "to.txt"))).rejects.toThrow(/ENOENT/);
    expect(await readFile(join(d, "to.txt"), "utf8")).toBe("old");
    expect(await readdir(d)).toEqual(["to.txt"]);
  });
});
