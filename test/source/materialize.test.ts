import { execa } from "execa";
import { mkdir, readFile, readdir, rm, stat, unlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LmrError } from "../../src/core/errors.js";
import { cachePathFor } from "../../src/source/cache.js";
import { materializeUpstream, resolveHeadCommit } from "../../src/source/materialize.js";
import { parseRepoUrl } from "../../src/source/repo-url.js";
import { git, makeRepo, taskWith, removeTempDirs, tempDir, writeFiles, type FixtureRepo } from "./git-fixture.js";

afterAll(removeTempDirs);

async function listTree(root: string): Promise<string[]> {
  const out: string[] = [];
  async function walk(dir: string, rel: string): Promise<void> {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(join(dir, e.name), r);
      else out.push(r);
    }
  }
  await walk(root, "");
  return out.sort();
}

async function caught(p: Promise<unknown>): Promise<LmrError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof LmrError) return err;
    throw err;
  }
  throw new Error("expected an LmrError");
}

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

let repo: FixtureRepo;
let url: string;
let taskDir: string;

beforeAll(async () => {
  delete process.env.LMR_MIRROR;
  repo = await makeRepo();
  url = pathToFileURL(repo.dir).href;
  taskDir = await tempDir("task");
});

describe("URL upstream through the clone cache", () => {
  it("clones once, then reuses the cache; the tree has no .git", async () => {
    const cacheDir = await tempDir("cache");
    const dest1 = join(await tempDir("dest"), "tree");
    const first = await materializeUpstream(taskWith({ repo: url, commit: repo.first, license: "MIT" }, taskDir), dest1, { cacheDir });
    expect(first).toMatchObject({ origin: "clone", commit: repo.first, fetched: false });
    expect(await listTree(dest1)).toEqual(["data/big.txt", "model.py", "pkg/README.md", "pkg/core/algo.py"]);
    expect(await readFile(join(dest1, "model.py"), "utf8")).toContain("x * 2");

    const cachePath = cachePathFor(parseRepoUrl(url)!, cacheDir);
    expect(first.gitDir).toBe(cachePath);
    await writeFile(join(cachePath, "lmr-marker"), "kept");

    const dest2 = join(await tempDir("dest"), "tree");
    const second = await materializeUpstream(taskWith({ repo: url, commit: repo.second.slice(0, 12), license: "MIT" }, taskDir), dest2, { cacheDir });
    expect(second).toMatchObject({ origin: "cache", commit: repo.second, fetched: false });
    expect(await readFile(join(cachePath, "lmr-marker"), "utf8")).toBe("kept");
    expect(await readFile(join(dest2, "model.py"), "utf8")).toContain("x * 3");
    expect(await exists(join(dest2, ".git"))).toBe(false);
  });

  it("fetches into the cache when the commit is newer than the cached clone", async () => {
    const up = await makeRepo("grow");
    const u = pathToFileURL(up.dir).href;
    const cacheDir = await tempDir("cache");
    await materializeUpstream(taskWith({ repo: u, commit: up.second, license: "MIT" }, taskDir), join(await tempDir("d"), "t"), { cacheDir });
    await writeFiles(up.dir, { "model.py": "def loss(x):\n    return x * 4\n" });
    await git(up.dir, "commit", "-q", "-am", "third");
    const third = await git(up.dir, "rev-parse", "HEAD");
    const dest = join(await tempDir("d"), "t");
    const r = await materializeUpstream(taskWith({ repo: u, commit: third, license: "MIT" }, taskDir), dest, { cacheDir });
    expect(r).toMatchObject({ origin: "cache", fetched: true, commit: third });
    expect(await readFile(join(dest, "model.py"), "utf8")).toContain("x * 4");
  });

  it("lets two runs that race to clone the same repository both succeed", async () => {
    const cacheDir = await tempDir("cache");
    const task = taskWith({ repo: url, commit: repo.second, license: "MIT" }, taskDir);
    const dests = [join(await tempDir("d"), "t"), join(await tempDir("d"), "t")];
    const results = await Promise.all(dests.map((d) => materializeUpstream(task, d, { cacheDir })));
    expect(results.map((r) => r.commit)).toEqual([repo.second, repo.second]);
    const parent = join(cacheDir, "repos", "local", parseRepoUrl(url)!.owner);
    expect(await readdir(parent)).toEqual([`${parseRepoUrl(url)!.name}.git`]);
  });

  it("reports a missing commit after fetching and leaves no destination behind", async () => {
    const cacheDir = await tempDir("cache");
    const dest = join(await tempDir("d"), "t");
    const missing = "0123456789abcdef0123456789abcdef01234567";
    const err = await caught(materializeUpstream(taskWith({ repo: url, commit: missing, license: "MIT" }, taskDir), dest, { cacheDir }));
    expect(err.code).toBe("upstream/commit-not-found");
    expect(err.message).toBe(`commit ${missing} not found in ${url} (after fetching)`);
    expect(err.pointer).toBe("/upstream/commit");
    expect(err.file).toBe(join(taskDir, "task.json"));
    expect(await exists(dest)).toBe(false);
  });

  it("reports an unreachable repository", async () => {
    const cacheDir = await tempDir("cache");
    const bad = pathToFileURL(join(taskDir, "no-such-repo")).href;
    const err = await caught(materializeUpstream(taskWith({ repo: bad, commit: repo.first, license: "MIT" }, taskDir), join(cacheDir, "t"), { cacheDir }));
    expect([err.code, err.kind]).toEqual(["upstream/not-found", "input"]);
    expect(err.pointer).toBe("/upstream/repo");
    // the failed clone left no cache entry and no temp folder
    const host = join(cacheDir, "repos", "local");
    const owners = await readdir(host);
    for (const o of owners) expect(await readdir(join(host, o))).toEqual([]);
  });

  it("refuses a corrupt cache entry with a hint to delete it, and clears stale clone temps", async () => {
    const cacheDir = await tempDir("cache");
    const cachePath = cachePathFor(parseRepoUrl(url)!, cacheDir);
    await mkdir(cachePath, { recursive: true });
    await writeFile(join(cachePath, "HEAD"), "garbage\n");
    const err = await caught(materializeUpstream(taskWith({ repo: url, commit: repo.first, license: "MIT" }, taskDir), join(cacheDir, "t"), { cacheDir }));
    expect(err.code).toBe("upstream/cache-corrupt");
    expect(err.kind).toBe("infra");
    expect(err.hint).toContain(`rm -rf '${cachePath}'`);

    // An interrupted clone leaves only a temp sibling; an old one is swept, the entry is cloned afresh.
    await rm(cachePath, { recursive: true });
    const stale = join(cacheDir, "repos", "local", parseRepoUrl(url)!.owner, `.${parseRepoUrl(url)!.name}.git.tmp-dead`);
    await mkdir(join(stale, "objects"), { recursive: true });
    const old = new Date(Date.now() - 3 * 3600 * 1000);
    await utimes(stale, old, old);
    const r = await materializeUpstream(taskWith({ repo: url, commit: repo.first, license: "MIT" }, taskDir), join(cacheDir, "t2"), { cacheDir });
    expect(r.origin).toBe("clone");
    expect(await exists(stale)).toBe(false);
  });

  it("takes only upstream.subdir and rejects a missing one", async () => {
    const cacheDir = await tempDir("cache");
    const dest = join(await tempDir("d"), "t");
    await materializeUpstream(taskWith({ repo: url, commit: repo.second, license: "MIT", subdir: "pkg/core" }, taskDir), dest, { cacheDir });
    expect(await listTree(dest)).toEqual(["algo.py", "extra.py"]);
    const dest2 = join(await tempDir("d"), "t");
    const err = await caught(materializeUpstream(taskWith({ repo: url, commit: repo.first, license: "MIT", subdir: "nope" }, taskDir), dest2, { cacheDir }));
    expect(err.code).toBe("upstream/subdir-missing");
    expect(err.pointer).toBe("/upstream/subdir");
    expect(await exists(dest2)).toBe(false);
  });

  it("refuses a destination that is not empty", async () => {
    const dest = await tempDir("full");
    await writeFile(join(dest, "keep.txt"), "x");
    const err = await caught(
      materializeUpstream(taskWith({ repo: url, commit: repo.first, license: "MIT" }, taskDir), dest, { cacheDir: await tempDir("cache") }),
    );
    expect(err.code).toBe("upstream/dest-not-empty");
    expect(await readdir(dest)).toEqual(["keep.txt"]);
  });
});

describe("mirror", () => {
  const ghUrl = "https://github.com/Some-Owner/some-repo";

  it("serves a github URL from DIR/OWNER+NAME/x.git without network or cache", async () => {
    const mirror = await tempDir("mirror");
    await execa("git", ["clone", "-q", "--bare", repo.dir, join(mirror, "Some-Owner+some-repo", "x.git")]);
    const cacheDir = await tempDir("cache");
    const dest = join(await tempDir("d"), "t");
    const r = await materializeUpstream(taskWith({ repo: ghUrl, commit: repo.first, license: "MIT" }, taskDir), dest, { cacheDir, mirror });
    expect(r).toMatchObject({ origin: "mirror", commit: repo.first, gitDir: join(mirror, "Some-Owner+some-repo", "x.git") });
    expect(await readFile(join(dest, "model.py"), "utf8")).toContain("x * 2");
    expect(await readdir(cacheDir)).toEqual([]);
    expect(await resolveHeadCommit(ghUrl, { mirror })).toBe(repo.second);
  });

  it("finds a work-tree snapshot (repo/.git), matching the name case-insensitively, and DIR/OWNER/NAME.git", async () => {
    const mirror = await tempDir("mirror");
    await execa("git", ["clone", "-q", repo.dir, join(mirror, "some-owner+Some-Repo", "repo")]);
    const r = await materializeUpstream(taskWith({ repo: `${ghUrl}.git`, commit: repo.second, license: "MIT" }, taskDir), join(await tempDir("d"), "t"), {
      mirror,
    });
    expect(r.gitDir).toBe(join(mirror, "some-owner+Some-Repo", "repo", ".git"));

    const mirror2 = await tempDir("mirror");
    await execa("git", ["clone", "-q", "--bare", repo.dir, join(mirror2, "Some-Owner", "some-repo.git")]);
    const r2 = await materializeUpstream(taskWith({ repo: ghUrl, commit: repo.second, license: "MIT" }, taskDir), join(await tempDir("d"), "t"), {
      mirror: mirror2,
    });
    expect(r2.gitDir).toBe(join(mirror2, "Some-Owner", "some-repo.git"));
  });

  it("names every path it tried when the mirror lacks the repository, and does not fall back to the network", async () => {
    const mirror = await tempDir("mirror");
    const cacheDir = await tempDir("cache");
    const dest = join(await tempDir("d"), "t");
    const err = await caught(materializeUpstream(taskWith({ repo: ghUrl, commit: repo.first, license: "MIT" }, taskDir), dest, { cacheDir, mirror }));
    expect(err.code).toBe("upstream/mirror-missing");
    for (const p of [
      join(mirror, "Some-Owner+some-repo"),
      join(mirror, "Some-Owner+some-repo", "repo"),
      join(mirror, "Some-Owner", "some-repo.git"),
      join(mirror, "Some-Owner", "some-repo"),
    ]) {
      expect(err.message).toContain(p);
    }
    expect(await readdir(cacheDir)).toEqual([]);
    expect(await exists(dest)).toBe(false);
  });

  it("writes a partial snapshot's tree and reports the blobs it lacks", async () => {
    const mirror = await tempDir("mirror");
    const bare = join(mirror, "Some-Owner+some-repo", "repo");
    await execa("git", ["clone", "-q", "--bare", "--no-local", repo.dir, bare]);
    // Unpack so each object is a file, then drop the blob of data/big.txt as snapshots drop large files.
    const packDir = join(bare, "objects", "pack");
    const packs = (await readdir(packDir)).filter((f) => f.endsWith(".pack"));
    for (const p of packs) {
      const data = await readFile(join(packDir, p));
      await rm(join(packDir, p));
      await rm(join(packDir, p.replace(/\.pack$/, ".idx")));
      await execa("git", [`--git-dir=${bare}`, "unpack-objects", "-q"], { input: data });
    }
    const blob = await git(repo.dir, "rev-parse", `${repo.first}:data/big.txt`);
    await unlink(join(bare, "objects", blob.slice(0, 2), blob.slice(2)));
    const dest = join(await tempDir("d"), "t");
    const r = await materializeUpstream(taskWith({ repo: ghUrl, commit: repo.first, license: "MIT" }, taskDir), dest, { mirror });
    expect(r.missing).toEqual(["data/big.txt"]);
    expect(await listTree(dest)).toEqual(["model.py", "pkg/README.md", "pkg/core/algo.py"]);
  });
});

describe("local path upstream", () => {
  it("copies a plain folder, skipping .git, caches and notebook checkpoints", async () => {
    const parent = await tempDir("plain");
    await writeFiles(join(parent, "code"), {
      "a.py": "A = 1\n",
      "sub/b.py": "B = 2\n",
      "sub/__pycache__/b.cpython-311.pyc": "junk",
      "stale.pyc": "junk",
      ".ipynb_checkpoints/nb-checkpoint.ipynb": "{}",
      ".git/HEAD": "ref: refs/heads/main\n",
    });
    const dest = join(await tempDir("d"), "t");
    const r = await materializeUpstream(taskWith({ path: "code", license: "MIT" }, parent), dest);
    expect(r).toEqual({ origin: "path", location: join(parent, "code") });
    expect(await listTree(dest)).toEqual(["a.py", "sub/b.py"]);
  });

  it("archives a git work tree at the given commit, ignoring uncommitted edits", async () => {
    const up = await makeRepo("wt");
    await writeFile(join(up.dir, "model.py"), "uncommitted\n");
    const dest = join(await tempDir("d"), "t");
    const r = await materializeUpstream(taskWith({ path: up.dir, commit: up.first, license: "MIT", subdir: "pkg" }, taskDir), dest);
    expect(r).toMatchObject({ origin: "path", commit: up.first });
    expect(await listTree(dest)).toEqual(["README.md", "core/algo.py"]);
    expect(await resolveHeadCommit(up.dir)).toBe(up.second);
  });

  it("reports a missing path, and a commit on a folder outside git", async () => {
    const err = await caught(materializeUpstream(taskWith({ path: "nowhere", license: "MIT" }, taskDir), join(taskDir, "t1")));
    expect(err.code).toBe("upstream/path-missing");
    expect(err.pointer).toBe("/upstream/path");
    const plain = await tempDir("plain");
    const err2 = await caught(materializeUpstream(taskWith({ path: plain, commit: repo.first, license: "MIT" }, taskDir), join(taskDir, "t2")));
    expect(err2.code).toBe("upstream/not-git");
  });
});

describe("resolveHeadCommit", () => {
  it("reads the default branch head over a URL", async () => {
    expect(await resolveHeadCommit(url, {})).toBe(repo.second);
  });
});
