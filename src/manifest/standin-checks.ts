import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { checkRelativePath } from "../core/paths.js";
import { DEFAULT_BASE } from "./environment-checks.js";
import type { Finding } from "./schema-errors.js";
import { asObject } from "./semantic.js";

/*
 * Checks of what the candidate set-up replaces: environment.stand_ins (modules
 * it provides) and environment.patches (attributes of installed modules it
 * replaces, e.g. torch.compile on a torch without it). A patch must be made by
 * the set-up; a stand-in's reason must not contradict the base's Debian: where
 * this machine runs the base's Debian release and has apt-cache, a reason that
 * says a module is not packaged, or that Debian has python3-X, is checked.
 */

type Obj = Record<string, unknown>;

/** The Debian package that would provide a module: python3-<top module>, '_' as '-'. */
function debianPackageFor(module: string): string {
  return `python3-${module.split(".")[0]!.toLowerCase().replace(/_/g, "-")}`;
}

/** "not a Debian package", "not in Debian", "no Debian package", "not packaged in Debian". */
const SAYS_NOT_PACKAGED = /\b(?:not (?:a|in) Debian(?: package)?|no Debian package|not packaged (?:for|in|by) Debian|Debian (?:has|ships|packages) no\b)/i;
/** "Debian has python3-omegaconf", "Debian ships python3-bs4". */
const SAYS_PACKAGED = /\bDebian(?: [a-z]+)? (?:has|ships|packages) (python3-[a-z0-9][a-z0-9.+-]*[a-z0-9])/gi;

export async function checkReplacements(data: unknown, taskDir: string, apt: AptLookup = defaultApt): Promise<Finding[]> {
  const m = asObject(data);
  const env = asObject(m?.environment);
  if (!env) return [];
  const findings: Finding[] = [];
  const standIns = (Array.isArray(env.stand_ins) ? env.stand_ins : []).map((s) => asObject(s) ?? {});
  const stoodIn = new Set(standIns.map((s) => (typeof s.module === "string" ? s.module.split(".")[0]! : "")));
  const patches = (Array.isArray(env.patches) ? env.patches : []).map((p) => asObject(p) ?? {});
  if (patches.length > 0) findings.push(...(await checkPatches(patches, stoodIn, asObject(asObject(m?.tests)?.candidate), taskDir)));

  const base = typeof env.base === "string" ? env.base : DEFAULT_BASE;
  const release = /^debian:([a-z]+)$/.exec(base)?.[1];
  const claims = standIns.flatMap((s, i) => (typeof s.module === "string" && typeof s.reason === "string" ? [{ i, module: s.module, reason: s.reason }] : []));
  if (release === undefined || claims.length === 0) return findings;
  const wanted = new Set(claims.flatMap((c) => [debianPackageFor(c.module), ...[...c.reason.matchAll(SAYS_PACKAGED)].map((x) => x[1]!.toLowerCase())]));
  const known = await apt(release, [...wanted]);
  if (!known) return findings; // no apt-cache for this release here: nothing to check against
  for (const c of claims) {
    const pkg = debianPackageFor(c.module);
    if (known.has(pkg) && SAYS_NOT_PACKAGED.test(c.reason)) {
      findings.push({
        pointer: `/environment/stand_ins/${c.i}/reason`,
        message: `the reason says ${c.module} is not in Debian, but Debian ${release} has ${pkg} (apt-cache policy ${pkg})`,
        hint: `install it for real with "system_packages": ["${pkg}"], or say why the Debian package does not do (e.g. it fails to import there), with what was measured`,
      });
    }
    for (const x of c.reason.matchAll(SAYS_PACKAGED)) {
      const named = x[1]!.toLowerCase();
      if (!known.has(named)) {
        findings.push({
          pointer: `/environment/stand_ins/${c.i}/reason`,
          message: `the reason says Debian has ${named}, but Debian ${release} has no such package (apt-cache policy ${named})`,
          hint: "correct the reason: name the package apt-cache shows, or say the module is not packaged in Debian",
        });
      }
    }
  }
  return findings;
}

async function checkPatches(patches: Obj[], stoodIn: Set<string>, candidate: Obj | undefined, taskDir: string): Promise<Finding[]> {
  const findings: Finding[] = [];
  const setup = typeof candidate?.setup === "string" && checkRelativePath(candidate.setup) === undefined ? candidate.setup : undefined;
  // code only: the template's docstring shows the pattern, which does not make the patch
  const source = setup !== undefined ? await readFile(join(taskDir, setup), "utf8").then(stripPythonProse, () => undefined) : undefined;
  patches.forEach((p, i) => {
    if (typeof p.attribute !== "string" || !p.attribute.includes(".")) return; // the schema reports it
    const parts = p.attribute.split(".");
    const module = parts.slice(0, -1).join(".");
    const name = parts[parts.length - 1]!;
    const pointer = `/environment/patches/${i}/attribute`;
    if (stoodIn.has(parts[0]!)) {
      findings.push({
        pointer,
        message: `${p.attribute} patches ${parts[0]}, which is a stand-in (environment.stand_ins)`,
        hint: `give the stand-in module the attribute ${name} and drop the patch: patches are for modules installed for real`,
      });
      return;
    }
    if (setup === undefined) {
      findings.push({
        pointer,
        message: `${p.attribute} is patched, but the task has no candidate set-up to patch it (tests.candidate.setup)`,
        hint: 'write the patch in tests/candidate_setup.py (`lmr new` writes a template) and set "tests": {"candidate": {"setup": "tests/candidate_setup.py"}}',
      });
      return;
    }
    // the missing file itself is reported by the task-file checks
    if (
      source !== undefined &&
      !(new RegExp(`\\b${escape(module)}\\b`).test(source) && new RegExp(`(?:\\.${escape(name)}\\s*=|["']${escape(name)}["'])`).test(source))
    ) {
      findings.push({
        pointer,
        message: `${setup} never sets ${p.attribute} (no \`${module}\` with \`.${name} = …\` or setattr(…, "${name}", …) in it)`,
        hint: `replace the attribute there, e.g. \`import ${module}\` then \`${module}.${name} = …\`, or drop the patch`,
      });
    }
  });
  return findings;
}

/** Python source without triple-quoted strings and comments (roughly: enough to tell code from prose). */
function stripPythonProse(source: string): string {
  return source
    .replace(/"""[\s\S]*?"""|'''[\s\S]*?'''/g, "")
    .split("\n")
    .map((l) => l.replace(/^\s*#.*$/, ""))
    .join("\n");
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The Debian packages among `packages` known to apt for a release, or undefined when apt cannot answer for it here. */
export type AptLookup = (release: string, packages: string[]) => Promise<Set<string> | undefined>;

let hostRelease: Promise<string | undefined> | undefined;
let python3Packages: Promise<Set<string> | undefined> | undefined;

/** This machine's Debian release (VERSION_CODENAME), when it is Debian. */
function readHostRelease(): Promise<string | undefined> {
  hostRelease ??= readFile("/etc/os-release", "utf8").then(
    (t) => (/^ID=debian$/m.test(t) ? /^VERSION_CODENAME=([a-z]+)$/m.exec(t)?.[1] : undefined),
    () => undefined,
  );
  return hostRelease;
}

/**
 * apt-cache on this machine, when it runs the base's release: every python3-* package name,
 * read once per process (one call loads apt's cache, about a second). LMR_APT_CACHE names the
 * binary ("none" turns the check off).
 */
export const defaultApt: AptLookup = async (release, packages) => {
  const bin = process.env.LMR_APT_CACHE ?? "apt-cache";
  if (bin === "none" || (await readHostRelease()) !== release) return undefined;
  python3Packages ??= new Promise((resolve) => {
    execFile(bin, ["pkgnames", "python3-"], { timeout: 30_000, maxBuffer: 16 << 20, env: { ...process.env, LC_ALL: "C" } }, (err, stdout) =>
      resolve(err ? undefined : new Set(stdout.split("\n").filter((l) => l !== ""))),
    );
  });
  const all = await python3Packages;
  return all ? new Set(packages.filter((p) => all.has(p))) : undefined;
};
