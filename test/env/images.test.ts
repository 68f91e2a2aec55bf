import { describe, expect, it } from "vitest";
import { baseImageVariable, describeSpec, normaliseEnvironment, parseBase, planBase, planEnv } from "../../src/env/index.js";
import type { Environment } from "../../src/manifest/types.js";

const env = (over: Partial<Environment> = {}): Environment => ({ python: "3.11", requirements: [], gpu: false, network: false, ...over });

describe("normaliseEnvironment", () => {
  it("defaults to debian:bookworm and its Python, sorts and de-duplicates the package lists", () => {
    expect(normaliseEnvironment(env({ requirements: [" tqdm==4.66.1", "numpy<2", "tqdm==4.66.1"], system_packages: ["python3-torch", "python3-numpy"] }))).toEqual({
      base: "debian:bookworm",
      python: "3.11",
      system_packages: ["python3-numpy", "python3-torch"],
      requirements: ["numpy<2", "tqdm==4.66.1"],
    });
    expect(normaliseEnvironment(env({ base: "debian:trixie", python: "3.13" })).python).toBe("3.13");
    expect(normaliseEnvironment(env({ base: "python:3.12-slim", python: "3.12" })).python).toBe("3.12");
  });

  it("rejects a base it cannot build, naming the field", () => {
    expect(() => normaliseEnvironment(env({ base: "ubuntu:22.04" }))).toThrow(expect.objectContaining({ pointer: "/environment/base" }));
  });

  it("describes a spec and names its base-image variable", () => {
    expect(describeSpec(normaliseEnvironment(env({ requirements: ["a==1"] })))).toBe("debian:bookworm, python 3.11, 0 system packages, 1 requirement");
    expect(baseImageVariable("debian:bookworm")).toBe("LMR_BASE_IMAGE_DEBIAN_BOOKWORM");
    expect(baseImageVariable("python:3.12-slim")).toBe("LMR_BASE_IMAGE_PYTHON_3_12_SLIM");
    expect(parseBase("python:3.12-slim")).toEqual({ kind: "python", version: "3.12" });
  });
});

describe("image plans", () => {
  it("give one tag per image-relevant spec: gpu, network and stand-ins do not change the image", async () => {
    const a = await planEnv(normaliseEnvironment(env({ requirements: ["b==2", "a==1"] })));
    const b = await planEnv(normaliseEnvironment(env({ requirements: ["a==1", "b==2"], gpu: true, network: true, stand_ins: [{ module: "wandb", reason: "unused" }] })));
    const c = await planEnv(normaliseEnvironment(env({ requirements: ["a==1"] })));
    expect(a.tag).toMatch(/^lmr-env:[0-9a-f]{16}$/);
    expect(b.tag).toBe(a.tag);
    expect(c.tag).not.toBe(a.tag);
    const trixie = await planEnv(normaliseEnvironment(env({ base: "debian:trixie", python: "3.13", requirements: ["a==1", "b==2"] })));
    expect(trixie.tag).not.toBe(a.tag);
    expect(trixie.baseTag).not.toBe(a.baseTag);
  });

  it("write readable Dockerfiles: system packages by apt, requirements by pip into a venv, the harness baked in", async () => {
    const p = await planEnv(normaliseEnvironment(env({ system_packages: ["python3-numpy"], requirements: ["rapidfuzz==3.6.1"] })));
    const d = String(p.files.Dockerfile);
    expect(d).toContain(`# lmr environment image ${p.tag}`);
    expect(d).toContain(`FROM ${p.baseTag}`);
    // numpy from Debian gets OpenBLAS, not the reference BLAS an install without recommends picks
    expect(d).toMatch(/apt-get install -y --no-install-recommends python3-numpy libopenblas0-pthread/);
    expect(d).toMatch(/venv --system-site-packages/);
    expect(d).toMatch(/pip install .* -r \/opt\/lmr\/requirements.txt/);
    expect(p.files["requirements.txt"]).toBe("rapidfuzz==3.6.1\n");
    expect(Object.keys(p.files)).toContain("python/lmr_harness/run_pytest.py");
    expect(Object.keys(p.files).some((f) => f.includes("__pycache__") || f.startsWith("python/lmr_record"))).toBe(false);
    const noBlas = String((await planEnv(normaliseEnvironment(env({ system_packages: ["python3-einops"] })))).files.Dockerfile);
    expect(noBlas).not.toContain("libopenblas");
    const bare = String((await planEnv(normaliseEnvironment(env()))).files.Dockerfile);
    expect(bare).not.toMatch(/apt-get|requirements.txt/);
  });

  it("keep the base's source out of its tag (a label, checked at build time)", async () => {
    const spec = normaliseEnvironment(env());
    const a = await planBase(spec, "debian:bookworm");
    const b = await planBase(spec, "lmr-rootfs:bookworm");
    expect(a.tag).toBe(b.tag);
    expect(String(b.files.Dockerfile)).toContain("FROM lmr-rootfs:bookworm");
    expect(String((await planBase({ base: "python:3.12-slim", python: "3.12" }, "python:3.12-slim")).files.Dockerfile)).toMatch(/pip install .*pytest==/);
  });
});
