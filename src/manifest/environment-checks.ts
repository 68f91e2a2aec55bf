import type { Finding } from "./schema-errors.js";

/*
 * Checks of `environment` the schema cannot express: the Python a base
 * provides, Debian packages only where there is apt, a requirement named
 * twice, a module both stood in for and installed. The manifest may not match
 * the schema here; anything mistyped is left to the schema.
 */

/** The Python each Debian release ships as python3 (its python3-* packages are built for it). */
const DEBIAN_PYTHON: Readonly<Record<string, string>> = { bookworm: "3.11", trixie: "3.13" };
export const DEFAULT_BASE = "debian:bookworm";

/** The Python major.minor a base provides, or undefined for a base lmr does not know. */
export function basePython(base: string): string | undefined {
  const deb = /^debian:([a-z]+)$/.exec(base);
  if (deb) return DEBIAN_PYTHON[deb[1]!];
  return /^python:(3\.\d+)-slim$/.exec(base)?.[1];
}

/** A pip requirement's distribution name, normalised (PEP 503): "Foo_Bar[x]>=1" → "foo-bar". */
function requirementName(req: string): string {
  const name = /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(req)?.[1] ?? req.trim();
  return name.toLowerCase().replace(/[-_.]+/g, "-");
}

type Obj = Record<string, unknown>;
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);

export function checkEnvironment(raw: unknown): Finding[] {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return [];
  const env = raw as Obj;
  const findings: Finding[] = [];
  const base = typeof env.base === "string" ? env.base : DEFAULT_BASE;
  const provided = basePython(base);
  const python = typeof env.python === "string" ? env.python : undefined;
  if (provided && python && python.split(".").slice(0, 2).join(".") !== provided) {
    findings.push({
      pointer: "/environment/python",
      message: `python "${python}" does not match base ${base}, whose Python is ${provided}`,
      hint: base.startsWith("debian:")
        ? `set "python": "${provided}", or pick the base for ${python} (debian:bookworm is 3.11, debian:trixie 3.13, or "python:${python.split(".").slice(0, 2).join(".")}-slim")`
        : `set "python": "${provided}", or "base": "python:${python.split(".").slice(0, 2).join(".")}-slim"`,
    });
  }
  const system = strings(env.system_packages);
  if (system.length > 0 && !base.startsWith("debian:")) {
    findings.push({
      pointer: "/environment/system_packages",
      message: `system_packages are Debian packages, but base ${base} is not a Debian release lmr installs them on`,
      hint: 'use "base": "debian:bookworm" or "debian:trixie", or give the packages as pip requirements',
    });
  }
  const seen = new Map<string, number>();
  strings(env.requirements).forEach((r, i) => {
    const name = requirementName(r);
    const first = seen.get(name);
    if (first !== undefined) {
      findings.push({
        pointer: `/environment/requirements/${i}`,
        message: `${name} is required twice (also /environment/requirements/${first})`,
        hint: "keep one requirement per package, with one pinned version",
      });
    } else seen.set(name, i);
  });
  const standIns = Array.isArray(env.stand_ins) ? env.stand_ins : [];
  standIns.forEach((s, i) => {
    const module = typeof s === "object" && s !== null ? (s as Obj).module : undefined;
    if (typeof module !== "string") return;
    const top = requirementName(module.split(".")[0]!);
    const j = seen.get(top);
    if (j !== undefined) {
      findings.push({
        pointer: `/environment/stand_ins/${i}/module`,
        message: `${module} has a stand-in but is also installed (/environment/requirements/${j})`,
        hint: "drop the requirement (the grader's conftest provides the module) or drop the stand-in",
      });
    }
  });
  return findings;
}
