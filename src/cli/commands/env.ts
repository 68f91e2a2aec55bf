import type { Command } from "commander";
import { EXIT, LmrError } from "../../core/errors.js";
import { changedTasksSince } from "../../source/changed-tasks.js";
import { displayPath, findTaskDirs } from "../../manifest/read.js";
import {
  describeSpec,
  ensureBase,
  ensureEnv,
  groupByEnvironment,
  importRootfs,
  listLmrImages,
  loadTasksFor,
  parseBase,
  planBase,
  planEnv,
  pruneImages,
  resolveBaseSource,
  DEFAULT_BASE,
  baseMajorMinor,
  type BaseName,
  type BuildEvent,
  type EnvGroup,
  type LmrImage,
} from "../../env/index.js";
import { sweepStaleContainers } from "../../runner/docker/sweep.js";
import { action } from "../action.js";
import { paint, printJsonFailed, printJsonOk, progress, progressDone } from "../output.js";

interface BuildFlags {
  tasksDir: string;
  baseImage?: string;
  force?: boolean;
  print?: string | boolean;
  changedSince?: string;
  json?: boolean;
}
interface ListFlags {
  tasksDir: string;
  json?: boolean;
}
interface PruneFlags {
  tasksDir: string[];
  all?: boolean;
  dryRun?: boolean;
  json?: boolean;
}
interface BaseFlags {
  fromRootfs?: boolean;
  mirror?: string;
  baseImage?: string;
  json?: boolean;
}

export function registerEnv(program: Command): void {
  const env = program.command("env").description("task environments as Docker images: build, list, prune, base");
  env
    .command("build")
    .description("build the Docker image of each task's environment (only what changed)")
    .argument("[TASK_DIR...]", "task folders; default: every task under --tasks-dir")
    .option("--tasks-dir <DIR>", "folder whose subfolders are tasks", "tasks")
    .option("--base-image <REF>", "image the base layer is built FROM (default: $LMR_BASE_IMAGE_<BASE>, a `lmr env base` rootfs, the registry's)")
    .option("--force", "rebuild both layers even when they are up to date")
    .option("--print [LAYER]", "print the Dockerfile of the first task's env (or base) layer instead of building")
    .option(
      "--changed-since <REF>",
      "only the tasks whose inputs changed since git revision REF, as lmr verify --changed-since chooses them (none: nothing to build)",
    )
    .option("--json", "print what was built as JSON")
    .addHelpText(
      "after",
      `
Two layers: lmr-base:<hash> per base (debian:bookworm, debian:trixie, python:X.Y-slim)
with Python and pytest, and lmr-env:<hash> per distinct environment (system packages,
pip requirements, the toolkit's harness). A tag is a hash of what goes into the image,
so an unchanged environment builds nothing. Tests then run there with --sandbox docker
(or auto). Where no registry is reachable, make the Debian base first:
\`lmr env base --from-rootfs\`.
Exit codes: 0 built or up to date, 2 bad task or package, 3 Docker failed.

Examples:
  $ lmr env build --tasks-dir examples/tasks
  $ lmr env build tasks/dpo-preference-loss --print`,
    )
    .action(action(runBuild));
  env
    .command("list")
    .description("list lmr's images (rootfs, bases, environments) and the tasks that use them")
    .option("--tasks-dir <DIR>", "tasks to match images against", "tasks")
    .option("--json", "print as JSON")
    .addHelpText(
      "after",
      `
Examples:
  $ lmr env list
  $ lmr env list --tasks-dir examples/tasks --json`,
    )
    .action(action(runList));
  env
    .command("prune")
    .description("remove environment images no task uses any more, and unused bases")
    .option("--tasks-dir <DIR...>", "folders of tasks whose images stay", ["tasks"])
    .option("--all", "remove every lmr image, rootfs imports included")
    .option("--dry-run", "only say what would be removed")
    .option("--json", "print as JSON")
    .addHelpText(
      "after",
      `
Also removes test containers that a killed lmr left behind. The rootfs imports of
\`lmr env base --from-rootfs\` stay unless --all (they take minutes to make again).
Exit codes: 0 pruned, 3 an image could not be removed (in use by a container).

Examples:
  $ lmr env prune --dry-run
  $ lmr env prune --tasks-dir tasks --tasks-dir examples/tasks`,
    )
    .action(action(runPrune));
  env
    .command("base")
    .description("build a base image; --from-rootfs makes its Debian source with debootstrap (no registry needed)")
    .argument("[BASE]", "debian:bookworm | debian:trixie | python:X.Y-slim", DEFAULT_BASE)
    .option("--from-rootfs", "debootstrap a minimal Debian (python3, pytest, pip) and docker import it as lmr-rootfs:<suite>")
    .option("--mirror <URI>", "Debian mirror for debootstrap (default: the one apt uses here)")
    .option("--base-image <REF>", "image the base is built FROM instead")
    .option("--json", "print as JSON")
    .addHelpText(
      "after",
      `
Examples:
  $ sudo lmr env base debian:bookworm --from-rootfs      # ~2 min, offline from registries
  $ LMR_BASE_IMAGE_DEBIAN_TRIXIE=my/trixie lmr env base debian:trixie`,
    )
    .action(action(runBase));
}

const mb = (n: number): string => `${(n / 1e6).toFixed(0)} MB`;

/** Progress on a TTY: one line per layer step; elsewhere one line when a layer starts and ends. */
function reporter(json: boolean): (e: BuildEvent) => void {
  const tty = process.stderr.isTTY && !json;
  return (e) => {
    if (e.kind === "step" && tty) progress(`[${e.layer} ${e.tag}] step ${e.step}/${e.total}: ${e.text.slice(0, 90)}`);
    else if (e.kind === "start" && !json) process.stderr.write(`building ${e.layer} layer ${e.tag} (${e.why})\n`);
    else if (e.kind === "done") {
      progressDone();
      if (!json) process.stderr.write(`built ${e.tag} in ${e.seconds.toFixed(1)} s\n`);
    }
  };
}

async function runBuild(dirs: string[], flags: BuildFlags): Promise<number> {
  const t0 = performance.now();
  if (flags.changedSince !== undefined) {
    const all = dirs.length > 0 ? dirs : await findTaskDirs(flags.tasksDir);
    dirs = (await changedTasksSince(all, flags.changedSince, { siblings: true })).changed.map((c) => c.dir);
    if (dirs.length === 0) {
      if (flags.json) printJsonOk("env build", { images: [], seconds: 0 });
      else process.stdout.write(`no task changed since ${flags.changedSince}: nothing to build\n`);
      return EXIT.ok;
    }
  }
  const tasks = await loadTasksFor(dirs, flags.tasksDir);
  if (tasks.length === 0)
    throw new LmrError({ code: "usage/no-tasks", file: flags.tasksDir, message: "no task folders found", hint: "pass task folders or --tasks-dir" });
  const groups = await groupByEnvironment(tasks);
  if (flags.print !== undefined) {
    const layer = flags.print === true ? "env" : flags.print;
    if (layer !== "env" && layer !== "base") throw new LmrError({ code: "usage/bad-layer", message: `--print takes env or base, got '${layer}'` });
    const g = groups[0]!;
    const plan = layer === "env" ? await planEnv(g.spec) : await planBase(g.spec, (await resolveBaseSource(g.spec.base, flags.baseImage)).ref);
    process.stdout.write(String(plan.files.Dockerfile));
    return EXIT.ok;
  }
  const onEvent = reporter(flags.json ?? false);
  const rows = [];
  for (const g of groups) {
    const r = await ensureEnv(g.spec, { ...(flags.baseImage ? { baseImage: flags.baseImage } : {}), force: flags.force ?? false, onEvent })
      .catch((err: unknown) => {
        // A package that does not install is the manifest's: name the first task that asks for it.
        if (err instanceof LmrError && !err.file && err.pointer)
          throw new LmrError({
            code: err.code,
            file: displayPath(g.tasks[0]!.manifestPath),
            pointer: err.pointer,
            message: err.message,
            ...(err.hint ? { hint: err.hint } : {}),
          });
        throw err;
      })
      .finally(progressDone);
    rows.push({
      image: r.env.tag,
      id: r.env.id,
      size: r.env.size,
      built: r.env.built,
      seconds: r.env.seconds,
      base: { image: r.base.tag, built: r.base.built, seconds: r.base.seconds },
      spec: g.spec,
      tasks: g.tasks.map((t) => t.manifest.id),
    });
    if (!flags.json) {
      const what = r.env.built ? paint("green", `built in ${r.env.seconds.toFixed(1)} s`) : "up to date, nothing built";
      process.stdout.write(`${r.env.tag} ${what} (${mb(r.env.size)}; ${describeSpec(g.spec)}) ← ${g.tasks.map((t) => t.manifest.id).join(", ")}\n`);
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  if (flags.json) printJsonOk("env build", { images: rows, seconds });
  else if (rows.every((r) => !r.built && !r.base.built)) process.stdout.write(`all ${rows.length} environment image(s) up to date (${seconds.toFixed(1)} s)\n`);
  return EXIT.ok;
}

async function usersOf(tasksDir: string): Promise<EnvGroup[]> {
  try {
    return await groupByEnvironment(await loadTasksFor([], tasksDir));
  } catch {
    return [];
  }
}

async function runList(flags: ListFlags): Promise<number> {
  const images = await listLmrImages();
  const groups = await usersOf(flags.tasksDir);
  const tasksOf = (i: LmrImage): string[] =>
    groups.filter((g) => g.envTag === i.tag || (i.kind === "base" && g.baseTag === i.tag)).flatMap((g) => g.tasks.map((t) => t.manifest.id));
  if (flags.json) {
    printJsonOk("env list", { images: images.map((i) => ({ ...i, tasks: tasksOf(i) })) });
    return EXIT.ok;
  }
  if (images.length === 0) process.stdout.write("no lmr images; build some with `lmr env build`\n");
  for (const i of images) {
    const users = tasksOf(i);
    const what = i.spec ? describeSpec(i.spec) : (i.base ?? "");
    process.stdout.write(
      `${i.kind.padEnd(6)} ${i.tag.padEnd(30)} ${mb(i.size).padStart(8)}  ${i.created.slice(0, 19)}  ${what}${users.length ? ` ← ${users.join(", ")}` : i.kind === "env" ? paint("dim", " (no task under " + displayPath(flags.tasksDir) + ")") : ""}\n`,
    );
  }
  return EXIT.ok;
}

async function runPrune(flags: PruneFlags): Promise<number> {
  const groups = (await Promise.all(flags.tasksDir.map(usersOf))).flat();
  const removedContainers = flags.dryRun ? [] : await sweepStaleContainers();
  const r = await pruneImages(
    { envTags: new Set(groups.map((g) => g.envTag)), baseTags: new Set(groups.map((g) => g.baseTag)) },
    { all: flags.all ?? false, dryRun: flags.dryRun ?? false },
  );
  if (flags.json) {
    const data = { removed: r.removed, kept: r.kept, failed: r.failed, containers: removedContainers };
    if (r.failed.length === 0) printJsonOk("env prune", data);
    else
      printJsonFailed(
        "env prune",
        new LmrError({
          code: "env/prune-failed",
          message: `could not remove ${r.failed.length} image(s): ${r.failed.map((f) => `${f.image.tag} (${f.reason})`).join("; ")}`,
          hint: "an image a container still uses stays; stop the container and prune again",
        }),
        data,
      );
  } else {
    for (const i of r.removed) process.stdout.write(`${flags.dryRun ? "would remove" : "removed"} ${i.kind} ${i.tag} (${mb(i.size)})\n`);
    for (const f of r.failed) process.stderr.write(`lmr: could not remove ${f.image.tag}: ${f.reason}\n`);
    if (removedContainers.length) process.stdout.write(`removed ${removedContainers.length} leftover test container(s)\n`);
    process.stdout.write(`${r.removed.length} image(s) ${flags.dryRun ? "to remove" : "removed"}, ${r.kept.length} kept\n`);
  }
  return r.failed.length === 0 ? EXIT.ok : EXIT.infra;
}

async function runBase(base: string, flags: BaseFlags): Promise<number> {
  const b = parseBase(base);
  const python = baseMajorMinor(base);
  if (!b || !python)
    throw new LmrError({ code: "usage/bad-base", message: `unknown base '${base}'`, hint: "debian:bookworm, debian:trixie or python:3.X-slim" });
  let rootfs;
  if (flags.fromRootfs) {
    if (b.kind !== "debian")
      throw new LmrError({
        code: "usage/rootfs-not-debian",
        message: `--from-rootfs makes Debian bases only, not ${base}`,
        hint: "pull the official image where a registry is reachable, or pass --base-image",
      });
    const tty = process.stderr.isTTY && !flags.json;
    rootfs = await importRootfs(b.suite, {
      ...(flags.mirror ? { mirror: flags.mirror } : {}),
      onLine: (l) => (tty ? progress(l.slice(0, 100)) : undefined),
    }).finally(progressDone);
    if (!flags.json) process.stdout.write(`imported ${rootfs.tag} (${mb(rootfs.size)}) from ${rootfs.mirror} in ${rootfs.seconds.toFixed(0)} s\n`);
  }
  const r = await ensureBase(
    { base: base as BaseName, python },
    { ...(flags.baseImage ? { baseImage: flags.baseImage } : rootfs ? { baseImage: rootfs.tag } : {}), onEvent: reporter(flags.json ?? false) },
  ).finally(progressDone);
  if (flags.json) printJsonOk("env base", { rootfs: rootfs ?? null, base: r });
  else process.stdout.write(`${r.tag} ${r.built ? `built in ${r.seconds.toFixed(1)} s` : "up to date"} (${mb(r.size)})\n`);
  return EXIT.ok;
}
