import type { Environment } from "../manifest/types.js";
import type { ImportedModule, RunOutcome } from "../runner/types.js";
import type { EnvironmentStep } from "./record.js";

/** What the harness itself brings: tests may import these without declaring them. */
const HARNESS_MODULES = new Set(["pytest", "_pytest", "pluggy"]);

/** PEP 503 normalisation: "Scikit_Learn" and "scikit-learn" are one distribution. */
const normalizeName = (name: string): string => name.toLowerCase().replace(/[-_.]+/g, "-");

/** The distribution name of a pip requirement specifier ("torch>=1.12" → "torch"). */
const requirementName = (spec: string): string => normalizeName(spec.split(/[<>=!~[;@ ]/)[0]!.trim());

/** Whether the environment declares an installed module: by pip distribution, or a Debian python3-<module> package. */
function declares(env: Environment, mod: ImportedModule): boolean {
  const names = new Set([normalizeName(mod.module), ...(mod.dist ? [normalizeName(mod.dist)] : [])]);
  if (env.requirements.some((r) => names.has(requirementName(r)))) return true;
  return (env.system_packages ?? []).some((p) => p.startsWith("python3-") && names.has(normalizeName(p.slice("python3-".length))));
}

/**
 * Checks that the environment is complete: every third-party module that the
 * tree's code or the grader's code imported during a reference run is declared
 * (pip requirement, Debian package, or a stand-in the conftest provides).
 * Modules that libraries import for themselves are theirs to declare.
 */
export function environmentStep(env: Environment, outcome: RunOutcome | undefined): EnvironmentStep {
  const t = performance.now();
  const duration = (): number => Math.round(performance.now() - t) / 1000;
  if (!outcome?.imports) return { ok: true, skipped: true, reason: "not checked: the reference run reported no imports", modules: [], duration_s: 0 };
  const standIns = new Set((env.stand_ins ?? []).map((s) => s.module.split(".")[0]!));
  const problems: string[] = [];
  const modules = outcome.imports.filter(
    (m) => !HARNESS_MODULES.has(m.module) && (m.origin === "installed" || m.origin === "stand-in" || m.origin === "missing"),
  );
  for (const m of modules) {
    if (m.origin === "installed" && !declares(env, m) && !standIns.has(m.module)) {
      problems.push(
        `'${m.module}'${m.dist ? ` (distribution ${m.dist})` : ""}, imported by ${m.importer}, is installed but not declared: add it to environment.requirements (pinned) or environment.system_packages`,
      );
    } else if (m.origin === "stand-in" && !standIns.has(m.module)) {
      problems.push(
        `'${m.module}', imported by ${m.importer}, is a stand-in module (no file) that environment.stand_ins does not declare: add {"module": "${m.module}", "reason": "…"}`,
      );
    }
  }
  const summary = modules.map((m) => ({ module: m.module, origin: m.origin, importer: m.importer, ...(m.dist ? { dist: m.dist } : {}) }));
  if (problems.length > 0)
    return { ok: false, reason: `${problems.length} undeclared module(s): ${problems[0]}`, problems, modules: summary, duration_s: duration() };
  return { ok: true, modules: summary, duration_s: duration() };
}

/**
 * A module the reference's tests could not import, when that is why they failed:
 * our environment's fault (or the manifest's), never the task's logic. The
 * failure messages decide (an optional import that failed inside a try does not
 * count); the harness's import report adds which file imported it.
 */
export function findMissingModule(outcomes: RunOutcome[]): { module: string; importer?: string } | undefined {
  const re = /ModuleNotFoundError: No module named '([A-Za-z0-9_.]+)'/;
  for (const o of outcomes) {
    const texts = [...o.tests.map((t) => t.message ?? ""), o.reason ?? "", o.log];
    for (const text of texts) {
      const hit = re.exec(text);
      if (!hit) continue;
      const module = hit[1]!;
      const top = module.split(".")[0];
      const reported = o.imports?.find((x) => x.origin === "missing" && x.module === top);
      return { module, ...(reported ? { importer: reported.importer } : {}) };
    }
  }
  return undefined;
}

export function missingModuleReason(missing: { module: string; importer?: string }, python: string): string {
  const top = missing.module.split(".")[0];
  return (
    `infra: module '${missing.module}' is not installed for ${python}${missing.importer ? ` (imported by ${missing.importer})` : ""}: ` +
    `declare it in task.json environment.requirements (pip, pinned) or environment.system_packages (Debian, e.g. python3-${top!.replace(/_/g, "-")}), ` +
    `or replace it in the grader's conftest.py and list it in environment.stand_ins`
  );
}
