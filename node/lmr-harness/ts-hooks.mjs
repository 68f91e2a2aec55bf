// Module hooks (module.register) for lmr's Node test runs, on Node's loader thread:
//  - TypeScript: .ts/.tsx/.mts/.cts files are transpiled with the TypeScript that ts-morph
//    bundles (types are not checked: `lmr mask` and the task's own tsconfig do that), and
//    `./x.js` resolves to `./x.ts` as TypeScript's NodeNext convention has it;
//  - the import log: every bare specifier that a file under the run root imports, with
//    where it resolved (the tree, the grader, installed outside the tree, or missing),
//    posted to the main thread for verify's environment step.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { isBuiltin } from "node:module";
import { fileURLToPath } from "node:url";

let root = "";
let mountDir = "";
let port;
let testApi = "";
let ts;

export function initialize(data) {
  root = data.root ? `${data.root.replace(/\/+$/, "")}/` : "";
  mountDir = data.root && data.mount ? `${root}${data.mount.replace(/\/+$/, "")}/` : "";
  port = data.port;
  testApi = data.testApi ?? "";
}

const TS_FILE = /\.(ts|tsx|mts|cts)$/;

function underRoot(url) {
  if (!root || !url || !url.startsWith("file:")) return undefined;
  const path = fileURLToPath(url);
  return path.startsWith(root) ? path.slice(root.length) : undefined;
}

function topName(specifier) {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

function logImport(specifier, parentURL, resolvedURL) {
  const importer = underRoot(parentURL);
  if (importer === undefined || !port) return;
  if (specifier.startsWith(".") || specifier.startsWith("/") || specifier.startsWith("file:") || specifier.startsWith("#") || isBuiltin(specifier)) return;
  let origin = "missing";
  if (resolvedURL) {
    const path = resolvedURL.startsWith("file:") ? fileURLToPath(resolvedURL) : "";
    origin = mountDir && path.startsWith(mountDir) ? "grader" : path.startsWith(root) ? "tree" : "installed";
  }
  port.postMessage({ module: topName(specifier), importer, origin });
}

const BRIDGE = new URL("./bridge.mjs", import.meta.url).href;

export async function resolve(specifier, context, next) {
  // node:test with the per-test limit, for the grader's (and the tree's) files
  if (testApi && specifier === "node:test" && underRoot(context.parentURL) !== undefined) return { url: testApi, shortCircuit: true };
  // the bridge to the candidate, for the grader's files (the oracle's)
  if (testApi && specifier === "@lmr/bridge" && underRoot(context.parentURL) !== undefined) return { url: BRIDGE, shortCircuit: true };
  try {
    const resolved = await next(specifier, context);
    logImport(specifier, context.parentURL, resolved.url);
    return resolved;
  } catch (err) {
    // TypeScript sources import each other as `./x.js` (NodeNext) or without an extension
    if ((specifier.startsWith("./") || specifier.startsWith("../")) && context.parentURL?.startsWith("file:")) {
      const base = specifier.replace(/\.(m|c)?js$/, "");
      for (const ext of [".ts", ".tsx", ".mts", ".cts", "/index.ts"]) {
        try {
          return await next(`${base}${ext}`, context);
        } catch {
          // next candidate
        }
      }
    }
    logImport(specifier, context.parentURL, undefined);
    throw err;
  }
}

// In a task image (templates/docker/env.Dockerfile) the compiler ts-morph bundles is copied
// beside the harness folder as typescript.cjs; in the toolkit it comes from ts-morph itself.
const IMAGE_TYPESCRIPT = new URL("../typescript.cjs", import.meta.url);

async function loadTypeScript() {
  if (existsSync(IMAGE_TYPESCRIPT)) return (await import(IMAGE_TYPESCRIPT.href)).default;
  return (await import("ts-morph")).ts;
}

export async function load(url, context, next) {
  if (!url.startsWith("file:") || !TS_FILE.test(url)) return next(url, context);
  ts ??= await loadTypeScript();
  const path = fileURLToPath(url);
  const source = await readFile(path, "utf8");
  const commonjs = path.endsWith(".cts");
  const out = ts.transpileModule(source, {
    fileName: path,
    compilerOptions: {
      module: commonjs ? ts.ModuleKind.CommonJS : ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      jsx: ts.JsxEmit.ReactJSX,
      experimentalDecorators: true,
      inlineSourceMap: true,
      inlineSources: true,
    },
  });
  return { format: commonjs ? "commonjs" : "module", source: out.outputText, shortCircuit: true };
}
