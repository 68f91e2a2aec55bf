import { describe, expect, it } from "vitest";
import { detectLicense, isRedistributable } from "./license.js";

describe("isRedistributable", () => {
  it.each([
    "MIT",
    "Apache-2.0",
    "BSD-3-Clause",
    "GPL-3.0-only",
    "GPL-2.0-or-later",
    "GPL-3.0+",
    "CC-BY-4.0",
    "MIT OR Apache-2.0",
    "(MIT AND BSD-2-Clause)",
    "Apache-2.0 WITH LLVM-exception",
  ])("allows %s", (id) => {
    expect(isRedistributable(id)).toBe(true);
  });
  it.each(["NOASSERTION", "NONE", "none found", "", "LicenseRef-custom", "CC-BY-NC-4.0", "MIT AND LicenseRef-x", "proprietary", undefined])(
    "refuses %s",
    (id) => {
      expect(isRedistributable(id)).toBe(false);
    },
  );
});

describe("detectLicense", () => {
  it("names the licence a file's text states", () => {
    expect(detectLicense("MIT License\n\nPermission is hereby granted, free of charge, to any person")).toBe("MIT");
    expect(detectLicense("                                 Apache License\n                           Version 2.0, January 2004")).toBe("Apache-2.0");
    expect(detectLicense("Redistribution and use in source and binary forms ... Neither the name of")).toBe("BSD-3-Clause");
    expect(detectLicense("Redistribution and use in source and binary forms, with or without")).toBe("BSD-2-Clause");
    expect(detectLicense("GNU GENERAL PUBLIC LICENSE\nVersion 3, 29 June 2007")).toBe("GPL-3.0-only");
    expect(detectLicense("All rights reserved.")).toBeUndefined();
  });
});
