import { describe, expect, it } from "vitest";
import { baseImageVariable, describeSpec, normaliseEnvironment, parseBase, planBase, planEnv } from "../../src/env/index.js";
import type { Environment } from "../../src/manifest/types.js";

const env = (over: Partial<Environment> = {}): Environment => ({ python: "3.11", requirements: [], gpu: false, network: false, ...over });

describe("normaliseEnvironment", () => {
  it("defaults to debian:bookworm and its Python, sorts and de-duplicates the package lists", () => {
    expect(
      normaliseEnvironment(env({ requirements: [" tqdm==4.66.1", "numpy<2", "tqdm==4.66.1"], system_packages: ["python3-torch", "python3-numpy"] })),
    ).toEqual({
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

  it("marks a node-test task's spec, and only then; a python:X.Y-slim base has no Node and is refused naming the field", () => {
    expect(normaliseEnvironment(env(), "node-test")).toEqual({ base: "debian:bookworm", python: "3.11", system_packages: [], requirements: [], node: true });
    expect("node" in normaliseEnvironment(env(), "pytest")).toBe(false);
    expect(describeSpec(normaliseEnvironment(env({ base: "debian:trixie", python: "3.13" }), "node-test"))).toBe(
      "debian:trixie, node 20 (Debian nodejs), python 3.13, 0 system packages, 0 requirements",
    );
    expect(() => normaliseEnvironment(env({ base: "python:3.12-slim", python: "3.12" }), "node-test")).toThrow(
      expect.objectContaining({ code: "env/node-base", pointer: "/environment/base", hint: expect.stringMatching(/debian:bookworm.*debian:trixie/) }),
    );
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
    const b = await planEnv(
      normaliseEnvironment(env({ requirements: ["a==1", "b==2"], gpu: true, network: true, stand_ins: [{ module: "wandb", reason: "unused" }] })),
    );
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
    // what decides verdicts is baked in: the harness, the bridge, and the record codec they exchange values in (not the recorder)
    expect(Object.keys(p.files)).toContain("python/lmr_bridge/strict.py");
    expect(
      Object.keys(p.files)
        .filter((f) => f.startsWith("python/lmr_record"))
        .sort(),
    ).toEqual(["python/lmr_record/__init__.py", "python/lmr_record/codec.py", "python/lmr_record/encode.py", "python/lmr_record/group.py"]);
    expect(Object.keys(p.files).some((f) => f.includes("__pycache__") || f.endsWith(".pyc"))).toBe(false);
    const noBlas = String((await planEnv(normaliseEnvironment(env({ system_packages: ["python3-einops"] })))).files.Dockerfile);
    expect(noBlas).not.toContain("libopenblas");
    const bare = String((await planEnv(normaliseEnvironment(env()))).files.Dockerfile);
    expect(bare).not.toMatch(/apt-get|requirements.txt/);
  });

  it("give a node-test spec its own image: the base's nodejs by apt, the Node harness and the compiler its hooks load; pytest images stay without", async () => {
    const py = await planEnv(normaliseEnvironment(env()));
    const node = await planEnv(normaliseEnvironment(env(), "node-test"));
    expect(node.tag).not.toBe(py.tag);
    expect(node.baseTag).toBe(py.baseTag);
    const d = String(node.files.Dockerfile);
    expect(d).toMatch(/apt-get install -y --no-install-recommends nodejs/);
    expect(d).toContain("COPY node/ /opt/lmr/node/");
    expect(Object.keys(node.files)).toEqual(
      expect.arrayContaining([
        "node/lmr-harness/node-test-main.mjs",
        "node/lmr-harness/ts-hooks.mjs",
        "node/typescript.cjs",
        "python/lmr_harness/run_pytest.py",
      ]),
    );
    expect(String(node.files["node/typescript.cjs"])).toMatch(/Copyright \(c\) Microsoft Corporation/);
    expect(String(py.files.Dockerfile)).not.toMatch(/nodejs|\/opt\/lmr\/node/);
    expect(Object.keys(py.files).some((f) => f.startsWith("node/"))).toBe(false);
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
