import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildChildEnv, kernelPinsFor, pinnedKernelEnv } from "./limits.js";

const AVX512 = "processor\t: 0\nflags\t\t: fpu sse sse2 avx avx2 fma avx512f avx512dq\n";
const AVX2 = "processor\t: 0\nflags\t\t: fpu sse sse2 avx avx2 fma\n";
const OLD = "processor\t: 0\nflags\t\t: fpu sse sse2 avx\n";

describe("kernelPinsFor", () => {
  it("pins OpenBLAS, torch, oneDNN and numpy to AVX2 kernels on an x86-64 processor with AVX2", () => {
    for (const cpu of [AVX512, AVX2]) {
      expect(kernelPinsFor(cpu, "x64")).toEqual({
        OPENBLAS_CORETYPE: "Haswell",
        ATEN_CPU_CAPABILITY: "avx2",
        ONEDNN_MAX_CPU_ISA: "AVX2",
        DNNL_MAX_CPU_ISA: "AVX2",
        NPY_DISABLE_CPU_FEATURES: "AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL",
      });
    }
  });

  it("pins nothing where the AVX2 kernels cannot run, or where there are no flags to read", () => {
    expect(kernelPinsFor(OLD, "x64")).toEqual({});
    expect(kernelPinsFor(AVX2, "arm64")).toEqual({});
    expect(kernelPinsFor("", "x64")).toEqual({});
  });
});

describe("buildChildEnv", () => {
  it("carries this machine's pins into every run's environment, over nothing from the caller", () => {
    const env = buildChildEnv({ pythonPath: "/usr/bin/python3", home: "/h", tmp: "/t", threads: 1, network: false });
    expect(env).toMatchObject(pinnedKernelEnv());
    expect(env.OPENBLAS_NUM_THREADS).toBe("1");
  });

  const python = process.env.LMR_PYTHON ?? "python3";
  const hasNumpy = (() => {
    try {
      execFileSync(python, ["-c", "import numpy"], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  })();
  const avx512 = /^flags\s*:.*\bavx512f\b/m.test(
    (() => {
      try {
        return readFileSync("/proc/cpuinfo", "utf8");
      } catch {
        return "";
      }
    })(),
  );

  it.skipIf(!hasNumpy || !avx512)("numpy started with that environment uses no AVX-512 loop on an AVX-512 machine", () => {
    const code = "from numpy.core._multiarray_umath import __cpu_features__ as f; print(f['AVX512F'], f['AVX2'])";
    const plain = execFileSync(python, ["-c", code], { env: { PATH: process.env.PATH ?? "/usr/bin" } })
      .toString()
      .trim();
    const pinned = execFileSync(python, ["-W", "error", "-c", code], {
      env: buildChildEnv({ pythonPath: python, home: "/tmp", tmp: "/tmp", threads: 1, network: false }),
    })
      .toString()
      .trim();
    expect(plain).toBe("True True");
    expect(pinned).toBe("False True");
  });
});
