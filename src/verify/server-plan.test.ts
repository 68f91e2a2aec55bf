import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RunOutcome } from "../runner/types.js";
import { committedPlanFor, planInServer, planOf, readServerPlan, samePlan, serverPlanKey, writeServerPlan } from "./server-plan.js";

/** A first run: the tree's imports (made in the candidate) and what the tests' side left changed. */
const outcome = (modules: [string, string][], env?: { set: Record<string, string>; unset: string[] }): RunOutcome =>
  ({
    imports: modules.map(([module, origin]) => ({ module, origin, importer: "t.py", dist: null, file: null })),
    ...(env ? { env_changes: env } : {}),
  }) as unknown as RunOutcome;

describe("the fork server's plan", () => {
  it("preloads in the candidates' server the installed modules the tree imported, once each; keeps each side's variables", () => {
    const plan = planOf(
      outcome(
        [
          ["torch", "installed"],
          ["numpy", "installed"],
          ["torch", "installed"],
          ["helpers", "tree"],
          ["spacy_parses", "grader"],
        ],
        { set: { A: "1" }, unset: [] },
      ),
    );
    expect(plan).toEqual({ preload: [], envChanges: { set: { A: "1" }, unset: [] }, candidate: { preload: ["numpy", "torch"] } });
    // where the candidate reports what it loaded, that alone is its plan: the run's imports also
    // hold the tests' (pytest), which a candidates' server must not preload (it would report them
    // back, and the plan would never hold there)
    const both = {
      ...outcome([
        ["pytest", "installed"],
        ["torch", "installed"],
      ]),
      loaded_modules: { modules: ["pytest", "torch"], blocked: [], stand_ins: [] },
      candidate_loaded_modules: { modules: ["torch", "trainers_dep"], blocked: ["wandb"], stand_ins: [] },
      candidate_env_changes: { set: { B: "2" }, unset: [] },
    } as RunOutcome;
    expect(planOf(both)).toEqual({
      preload: ["pytest", "torch"],
      candidate: { preload: ["torch", "trainers_dep"], blocked: ["wandb"], envChanges: { set: { B: "2" }, unset: [] } },
    });
    expect(samePlan(planInServer(both, planOf(both)), planOf(both))).toBe(true);
  });

  it("preloads every module the first run loaded, submodules included, in its order; keeps what it blocked and what was its own or a fake", () => {
    const first = {
      ...outcome([["transformers", "installed"]]),
      loaded_modules: {
        modules: ["torch", "transformers", "transformers.models.gpt2.modeling_gpt2"],
        blocked: ["torch_xla"],
        stand_ins: ["wandb", "trainers"],
      },
    } as RunOutcome;
    const plan = planOf(first);
    expect(plan).toEqual({
      preload: ["torch", "transformers", "transformers.models.gpt2.modeling_gpt2"],
      blocked: ["torch_xla"],
      standIns: ["wandb", "trainers"],
      candidate: { preload: ["transformers"] },
    });
    // a run in the server that loads the same is the same plan; one that blocks or fakes another name is not
    expect(samePlan(planInServer(first, plan), plan)).toBe(true);
    const other = { ...first, loaded_modules: { ...first.loaded_modules!, blocked: [] } } as RunOutcome;
    expect(samePlan(planInServer(other, plan), plan)).toBe(false);
    const more = { ...first, loaded_modules: { ...first.loaded_modules!, modules: [...first.loaded_modules!.modules, "sympy"] } } as RunOutcome;
    expect(samePlan(planInServer(more, plan), plan)).toBe(false);
  });

  it("reads a run in a server started with the plan on top of its variables: a conftest setting them again is the same plan", () => {
    const remembered = { preload: [], envChanges: { set: { JOBLIB_MULTIPROCESSING: "0" }, unset: ["X"] }, candidate: { preload: ["joblib"] } };
    // in the child the variable is already set and X already gone: the conftest changes nothing
    expect(samePlan(planInServer(outcome([["joblib", "installed"]]), remembered), remembered)).toBe(true);
    expect(samePlan(planOf(outcome([["joblib", "installed"]])), remembered)).toBe(false);
    // a new import, or a variable set anew, is another plan
    expect(
      samePlan(
        planInServer(
          outcome([
            ["joblib", "installed"],
            ["torch", "installed"],
          ]),
          remembered,
        ),
        remembered,
      ),
    ).toBe(false);
    expect(samePlan(planInServer(outcome([["joblib", "installed"]], { set: { B: "2" }, unset: [] }), remembered), remembered)).toBe(false);
    // order does not matter
    expect(
      samePlan(
        { preload: ["a", "b"], envChanges: { set: { y: "1", x: "2" }, unset: [] } },
        { preload: ["b", "a"], envChanges: { set: { x: "2", y: "1" }, unset: [] } },
      ),
    ).toBe(true);
  });

  it("leaves out a variable that names a run's scratch folder, from a run and from a plan remembered before", async () => {
    const own = { TORCHINDUCTOR_CACHE_DIR: "/dev/shm/lmr-verify-1-a/lmr-run-Sw4yrK/tmp/torchinductor_lmr", CACHE: "/tmp/lmr-fork-x/c" };
    expect(planOf(outcome([["torch", "installed"]], { set: { ...own, A: "1" }, unset: [] }))).toEqual({
      preload: [],
      envChanges: { set: { A: "1" }, unset: [] },
      candidate: { preload: ["torch"] },
    });
    expect(planOf(outcome([["torch", "installed"]], { set: own, unset: [] }))).toEqual({ preload: [], candidate: { preload: ["torch"] } });
    const dir = await mkdtemp(join(tmpdir(), "lmr-plan-"));
    try {
      await writeServerPlan(dir, "k", { preload: ["torch"], envChanges: { set: { ...own, B: "2" }, unset: ["C"] } });
      expect(await readServerPlan(dir, "k")).toEqual({ preload: ["torch"], envChanges: { set: { B: "2" }, unset: ["C"] } });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("is remembered by key, and a file that is not a plan reads as none", async () => {
    const dir = await mkdtemp(join(tmpdir(), "lmr-plan-"));
    try {
      const key = serverPlanKey({
        workspace: "w",
        reference: "r",
        grader: "g",
        python: "/usr/bin/python3",
        pythonVersion: "3.11.2",
        sandbox: "bwrap",
        environment: {},
      });
      expect(key).not.toBe(
        serverPlanKey({ workspace: "w", reference: "r", grader: "g2", python: "/usr/bin/python3", pythonVersion: "3.11.2", sandbox: "bwrap", environment: {} }),
      );
      expect(await readServerPlan(dir, key)).toBeUndefined();
      await writeServerPlan(dir, key, { preload: ["torch"] });
      expect(await readServerPlan(dir, key)).toEqual({ preload: ["torch"] });
      await writeFile(join(dir, "verify", `server-plan-${key}.json`), JSON.stringify({ preload: [1] }));
      expect(await readServerPlan(dir, key)).toBeUndefined();
      await writeFile(join(dir, "verify", `server-plan-${key}.json`), JSON.stringify({ preload: ["json"], blocked: "torch" }));
      expect(await readServerPlan(dir, key)).toBeUndefined();
      await writeServerPlan(dir, key, { preload: ["json"], blocked: ["torch"], standIns: ["wandb"], candidate: { preload: ["numpy"], blocked: ["torch"] } });
      expect(await readServerPlan(dir, key)).toEqual({
        preload: ["json"],
        blocked: ["torch"],
        standIns: ["wandb"],
        candidate: { preload: ["numpy"], blocked: ["torch"] },
      });
      await writeFile(join(dir, "verify", `server-plan-${key}.json`), JSON.stringify({ preload: ["json"], candidate: { preload: "numpy" } }));
      expect(await readServerPlan(dir, key)).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("the plan a committed record carries", () => {
  const plan = { preload: ["torch"], candidate: { preload: ["numpy"] } };
  const bwrap = { backend: "bwrap", python: { version: "3.11.2" } };
  const image = { id: "sha256:" + "a".repeat(64) };
  it("is used where the record was made where this run goes", () => {
    expect(committedPlanFor({ backend: "bwrap", python: { version: "3.11.2" }, server_plan: plan }, bwrap)).toEqual(plan);
    expect(
      committedPlanFor({ backend: "docker", python: { version: "3.11" }, image, server_plan: plan }, { backend: "docker", python: { version: "3.11" }, image }),
    ).toEqual(plan);
  });
  it("is not used from another backend, interpreter version or image, nor where it is malformed or absent", () => {
    expect(committedPlanFor({ backend: "docker", python: { version: "3.11" }, image, server_plan: plan }, bwrap)).toBeUndefined();
    expect(committedPlanFor({ backend: "bwrap", python: { version: "3.13.1" }, server_plan: plan }, bwrap)).toBeUndefined();
    expect(
      committedPlanFor(
        { backend: "docker", python: { version: "3.11" }, image, server_plan: plan },
        { backend: "docker", python: { version: "3.11" }, image: { id: "sha256:" + "b".repeat(64) } },
      ),
    ).toBeUndefined();
    expect(committedPlanFor({ backend: "bwrap", python: { version: "3.11.2" }, server_plan: { preload: "torch" } }, bwrap)).toBeUndefined();
    expect(committedPlanFor({ backend: "bwrap", python: { version: "3.11.2" } }, bwrap)).toBeUndefined();
    expect(committedPlanFor(undefined, bwrap)).toBeUndefined();
  });
});
