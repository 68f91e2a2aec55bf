import { afterAll, describe, expect, it } from "vitest";
import { checkEnvironment } from "../../src/manifest/environment-checks.js";
import { makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli } from "../helpers/run-cli.js";
import { copyTask } from "../helpers/task-copy.js";

afterAll(removeTempDirs);

const env = (over: Record<string, unknown>) => ({ python: "3.11", requirements: [], gpu: false, network: false, ...over });
const pointers = (raw: unknown) => checkEnvironment(raw).map((f) => f.pointer);

describe("environment checks the schema cannot express", () => {
  it("accepts each base with its own Python (patch versions aside)", () => {
    expect(checkEnvironment(env({}))).toEqual([]);
    expect(checkEnvironment(env({ python: "3.11.2", base: "debian:bookworm", system_packages: ["python3-torch"] }))).toEqual([]);
    expect(checkEnvironment(env({ python: "3.13", base: "debian:trixie" }))).toEqual([]);
    expect(checkEnvironment(env({ python: "3.12", base: "python:3.12-slim", requirements: ["numpy==2.1.0"] }))).toEqual([]);
  });

  it("names a Python that is not the base's, with the base that has it", () => {
    const [f] = checkEnvironment(env({ python: "3.13" }));
    expect(f).toMatchObject({ pointer: "/environment/python", message: 'python "3.13" does not match base debian:bookworm, whose Python is 3.11' });
    expect(f!.hint).toMatch(/debian:trixie/);
    expect(pointers(env({ python: "3.11", base: "python:3.12-slim" }))).toEqual(["/environment/python"]);
  });

  it("takes system packages only on a Debian base", () => {
    const [f] = checkEnvironment(env({ python: "3.12", base: "python:3.12-slim", system_packages: ["python3-numpy"] }));
    expect(f).toMatchObject({ pointer: "/environment/system_packages" });
    expect(f!.hint).toMatch(/debian:bookworm/);
  });

  it("finds a package required twice and a module both stood in for and installed", () => {
    expect(pointers(env({ requirements: ["numpy<1.25", "NumPy==1.24.4"] }))).toEqual(["/environment/requirements/1"]);
    expect(pointers(env({ requirements: ["transformers==4.36.2"], stand_ins: [{ module: "transformers.models", reason: "heavy" }] }))).toEqual([
      "/environment/stand_ins/0/module",
    ]);
  });

  it("leaves mistyped fields to the schema", () => {
    expect(checkEnvironment("nope")).toEqual([]);
    expect(checkEnvironment(env({ python: 3.11, system_packages: "x", requirements: [1] }))).toEqual([]);
  });

  it("reports through lmr validate with file, field and fix, exit 1", async () => {
    const root = await makeTempDir("envcheck");
    const dir = await copyTask(root, "pref-loss", (m) => {
      m.environment = { ...m.environment, base: "debian:trixie", python: "3.11" };
    });
    const r = await runCli(["validate", dir]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout + r.stderr).toMatch(
      /task\.json: \/environment\/python: python "3\.11" does not match base debian:trixie, whose Python is 3\.13 \(hint: set "python": "3\.13"/,
    );
  });
});
