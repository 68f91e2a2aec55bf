/**
 * Licence facts for import and export: recognising a licence file, and
 * deciding whether an SPDX expression lets us redistribute the code.
 */

/** SPDX ids (and prefixes ending in "-") of licences that allow redistribution with notice. */
const REDISTRIBUTABLE = [
  "MIT",
  "MIT-0",
  "Apache-2.0",
  "BSD-2-Clause",
  "BSD-3-Clause",
  "BSD-3-Clause-Clear",
  "BSD-4-Clause",
  "0BSD",
  "ISC",
  "Zlib",
  "Unlicense",
  "CC0-1.0",
  "CC-BY-4.0",
  "CC-BY-SA-4.0",
  "CC-BY-3.0",
  "MPL-2.0",
  "EPL-2.0",
  "BSL-1.0",
  "Python-2.0",
  "PSF-2.0",
  "Artistic-2.0",
  "GPL-2.0",
  "GPL-3.0",
  "LGPL-2.1",
  "LGPL-3.0",
  "AGPL-3.0",
];
const REDISTRIBUTABLE_SET = new Set(REDISTRIBUTABLE.map((s) => s.toLowerCase()));

function isKnownId(id: string): boolean {
  const plain = id
    .toLowerCase()
    .replace(/\+$/, "")
    .replace(/-(only|or-later)$/, "");
  return REDISTRIBUTABLE_SET.has(plain);
}

/**
 * True only for a known permissive or copyleft SPDX id, or an expression of
 * them ("MIT OR Apache-2.0": one suffices; "MIT AND CC-BY-4.0": all must be).
 * NOASSERTION, NONE, LicenseRef-*, non-commercial licences and free text are false.
 */
export function isRedistributable(license: string | undefined): boolean {
  if (license === undefined) return false;
  const expr = license.replace(/[()]/g, " ").trim();
  if (expr === "") return false;
  const any = expr.split(/\s+OR\s+/);
  return any.some((alt) => {
    const all = alt.split(/\s+AND\s+/).map((s) => s.trim().replace(/\s+WITH\s+.*$/, ""));
    return all.every((id) => /^[A-Za-z0-9.+-]+$/.test(id) && isKnownId(id));
  });
}

const PATTERNS: [RegExp, string | ((text: string) => string)][] = [
  [/GNU AFFERO GENERAL PUBLIC LICENSE/i, "AGPL-3.0-only"],
  [/GNU LESSER GENERAL PUBLIC LICENSE/i, (t) => (/Version 2\.1/i.test(t) ? "LGPL-2.1-only" : "LGPL-3.0-only")],
  [/GNU GENERAL PUBLIC LICENSE/i, (t) => (/Version 2,/i.test(t) ? "GPL-2.0-only" : "GPL-3.0-only")],
  [/Apache License[\s,]+Version 2\.0/i, "Apache-2.0"],
  [/Mozilla Public License,? (Version|v\.?) ?2\.0/i, "MPL-2.0"],
  [/Permission is hereby granted, free of charge/i, "MIT"],
  [/Redistribution and use in source and binary forms/i, (t) => (/Neither the name/i.test(t) ? "BSD-3-Clause" : "BSD-2-Clause")],
  [/Permission to use, copy, modify, and(\/or)? distribute this software for any purpose/i, "ISC"],
  [/This is free and unencumbered software released into the public domain/i, "Unlicense"],
  [/Creative Commons Attribution 4\.0 International/i, "CC-BY-4.0"],
  [/CC0 1\.0 Universal/i, "CC0-1.0"],
];

/** The SPDX id a licence file's text names, or undefined when it is not one we recognise. */
export function detectLicense(text: string): string | undefined {
  for (const [re, id] of PATTERNS) if (re.test(text)) return typeof id === "string" ? id : id(text);
  return undefined;
}

/** File names a repository's licence usually has, in the order we look for them. */
export const LICENSE_FILES = ["LICENSE", "LICENSE.txt", "LICENSE.md", "LICENCE", "LICENCE.txt", "LICENCE.md", "COPYING", "COPYING.txt"];
