import { afterEach, describe, expect, it } from "vitest";
import { failedPackage, findBuildCaBundle } from "../../src/env/build.js";

describe("failedPackage", () => {
  it("reads the package apt could not install", () => {
    expect(failedPackage(["Reading package lists...", "E: Unable to locate package python3-nope"])).toEqual({ tool: "apt", name: "python3-nope" });
    expect(failedPackage(["E: Package 'python3-gone' has no installation candidate"])).toEqual({ tool: "apt", name: "python3-gone" });
    expect(failedPackage(["E: Version '9.9' for 'python3-numpy' was not found"])).toEqual({ tool: "apt", name: "python3-numpy" });
  });

  it("reads the requirement pip could not install", () => {
    expect(
      failedPackage([
        "ERROR: Could not find a version that satisfies the requirement rapidfuzz==99 (from versions: none)",
        "ERROR: No matching distribution found for rapidfuzz==99",
      ]),
    ).toEqual({ tool: "pip", name: "rapidfuzz==99" });
    expect(failedPackage(["Step 3/9 : RUN true", "some other failure"])).toBeUndefined();
  });
});

describe("findBuildCaBundle", () => {
  const saved = process.env.LMR_BUILD_CA_BUNDLE;
  afterEach(() => {
    if (saved === undefined) delete process.env.LMR_BUILD_CA_BUNDLE;
    else process.env.LMR_BUILD_CA_BUNDLE = saved;
  });

  it("takes LMR_BUILD_CA_BUNDLE, where empty means none", () => {
    process.env.LMR_BUILD_CA_BUNDLE = "/some/ca.pem";
    expect(findBuildCaBundle()).toBe("/some/ca.pem");
    process.env.LMR_BUILD_CA_BUNDLE = "";
    expect(findBuildCaBundle()).toBeUndefined();
  });
});
