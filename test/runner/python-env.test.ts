import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { envKey, resolvePython, runTests } from "../../src/runner/index.js";

const FIX = resolve(fileURLToPath(new URL(".", import.meta.url)), "../fixtures/runner");
const BASE = process.env.LMR_PYTHON ?? "python3";
const saved = { LMR_PYTHON: process.env.LMR_PYTHON, PIP_NO_INDEX: process.env.PIP_NO_INDEX };
let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "lmr-pyenv-test-"));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});
beforeEach(() => {
  // Requirements are only honoured without --python; keep pip off the network.
  delete process.env.LMR_PYTHON;
  process.env.PIP_NO_INDEX = "1";
});
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

describe("resolvePython", () => {
  it("uses an explicit interpreter as is and reports its real executable and version", async () => {
    const env = await resolvePython({ python: BASE, requirements: ["lmr-ignored-because-explicit"] });
    expect(isAbsolute(env.path)).toBe(true);
    expect(existsSync(env.path)).toBe(true);
    expect(env.version).toMatch(/^3\.\d+\.\d+$/);
    expect(env.prefixes?.length).toBeGreaterThan(0);
  });

  it("takes LMR_PYTHON when no --python is given", async () => {
    process.env.LMR_PYTHON = "/nonexistent/lmr-python";
    await expect(resolvePython({})).rejects.toMatchObject({ code: "env/python-not-found", kind: "infra" });
  });

  it("reports a missing interpreter as an infra error naming it", async () => {
    const err = await resolvePython({ python: "/nonexistent/python3" }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "env/python-not-found", kind: "infra" });
    expect(String((err as Error).message)).toMatch(/\/nonexistent\/python3/);
  });

  it("reports an interpreter without pytest as infra, and so does a run that uses it anyway", async () => {
    const bare = join(work, "bare");
    execFileSync(BASE, ["-m", "venv", "--without-pip", bare]);
    const py = join(bare, "bin", "python");
    await expect(resolvePython({ python: py })).rejects.toMatchObject({ code: "env/pytest-missing", kind: "infra" });
    const o = await runTests({ tree: join(FIX, "trees", "good"), grader: join(FIX, "grader"), python: { path: py, version: "3" }, timeoutTotalS: 20 });
    expect(o.status).toBe("infra");
    expect(o.reason).toMatch(/pytest is not importable/);
  });

  it("builds a cached virtualenv for requirements, reuses it, rebuilds it without its marker", async () => {
    const cacheDir = join(work, "cache");
    const t0 = Date.now();
    const env = await resolvePython({ base: BASE, requirements: ["pytest"], cacheDir });
    const buildMs = Date.now() - t0;
    expect(env.path.startsWith(join(cacheDir, "envs"))).toBe(true);
    const dir = join(env.path, "..", "..");
    const marker = JSON.parse(await readFile(join(dir, "lmr-env.json"), "utf8")) as { created_at: string; requirements: string[] };
    expect(marker.requirements).toEqual(["pytest"]);
    expect((await readdir(join(cacheDir, "envs"))).filter((n) => n.startsWith("."))).toEqual([]);

    const t1 = Date.now();
    const again = await resolvePython({ base: BASE, requirements: ["pytest"], cacheDir });
    const cachedMs = Date.now() - t1;
    expect(again.path).toBe(env.path);
    expect(JSON.parse(await readFile(join(dir, "lmr-env.json"), "utf8"))).toEqual(marker);
    console.log(`[python-env] venv build ${buildMs} ms, cached lookup ${cachedMs} ms`);

    await rm(join(dir, "lmr-env.json"));
    const rebuilt = await resolvePython({ base: BASE, requirements: ["pytest"], cacheDir });
    expect(rebuilt.path).toBe(env.path);
    const m2 = JSON.parse(await readFile(join(dir, "lmr-env.json"), "utf8")) as { created_at: string };
    expect(m2.created_at).not.toBe(marker.created_at);

    // The venv lives under /tmp, which bwrap hides: the run must still see it.
    const o = await runTests({ tree: join(FIX, "trees", "good"), grader: join(FIX, "grader"), python: rebuilt, timeoutTotalS: 20 });
    expect(o.status, o.log + (o.reason ?? "")).toBe("passed");
    expect(o.python.path).toBe(rebuilt.path);
  });

  it("keys environments by base interpreter and sorted requirements", () => {
    const a = envKey({ path: "/usr/bin/python3", version: "3.11.2" }, ["numpy", "scipy"]);
    expect(envKey({ path: "/usr/bin/python3", version: "3.11.2" }, ["scipy", "numpy", "numpy"])).toBe(a);
    expect(envKey({ path: "/usr/bin/python3", version: "3.12.1" }, ["numpy", "scipy"])).not.toBe(a);
    expect(envKey({ path: "/usr/bin/python3", version: "3.11.2" }, ["numpy"])).not.toBe(a);
  });

  it("reports a pip failure as infra naming the package and leaves nothing in the cache", async () => {
    const cacheDir = join(work, "cache-fail");
    const err = await resolvePython({ base: BASE, requirements: ["lmr-no-such-package-xyz==1.0"], cacheDir }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "env/pip-install-failed", kind: "infra" });
    expect(String((err as Error).message)).toMatch(/lmr-no-such-package-xyz/);
    expect(await readdir(join(cacheDir, "envs"))).toEqual([]);
  });
});
