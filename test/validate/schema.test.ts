import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { EXAMPLE_MANIFEST } from "../../src/manifest/example.js";
import { collectSchemaErrors } from "../../src/manifest/schema.js";
import { CATEGORIES } from "../../src/manifest/types.js";

const schema = JSON.parse(readFileSync("schema/task.schema.json", "utf8")) as Record<string, any>;

/** Every property name the schema declares anywhere (root, $defs, oneOf branches, items). */
function collectPropertyNames(node: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((n) => collectPropertyNames(n, out));
  else if (node && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key === "properties" && value && typeof value === "object" && !Array.isArray(value)) {
        for (const name of Object.keys(value)) out.add(name);
      }
      if (key !== "if") collectPropertyNames(value, out);
    }
  }
  return out;
}

function collectKeys(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((v) => collectKeys(v, out));
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      out.add(k);
      collectKeys(v, out);
    }
  }
  return out;
}

describe("schema/task.schema.json", () => {
  it("is pinned: a change to the schema shows up as a reviewed snapshot diff", () => {
    expect(schema).toMatchSnapshot();
  });

  it("compiles under ajv strict mode (2020-12, formats)", () => {
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats.default(ajv);
    expect(() => ajv.compile(schema)).not.toThrow();
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
  });

  it("lists the same nine categories as the TS contract", () => {
    expect(schema.properties.category.enum).toEqual([...CATEGORIES]);
  });

  it("accepts the typed example manifest, which uses every field the schema declares", () => {
    expect(collectSchemaErrors(EXAMPLE_MANIFEST)).toEqual([]);
    const used = collectKeys(EXAMPLE_MANIFEST);
    // `path` belongs to the local-upstream form, which the (git-upstream) example cannot also use.
    const unused = [...collectPropertyNames(schema)].filter((name) => !used.has(name) && name !== "path");
    expect(unused).toEqual([]);
  });

  it("closes every object: no additional properties anywhere", () => {
    const open: string[] = [];
    const walk = (node: unknown, at: string) => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${at}/${i}`));
      if (!node || typeof node !== "object") return;
      const n = node as Record<string, unknown>;
      // The prepare-step dispatcher is closed by the branch its `kind` selects.
      if (n.type === "object" && n.additionalProperties !== false && !at.endsWith("/if") && at !== "/$defs/prepareStep") open.push(at);
      for (const [k, v] of Object.entries(n)) walk(v, `${at}/${k}`);
    };
    walk(schema, "");
    expect(open).toEqual([]);
  });

  it("documents every field with a description", () => {
    const missing: string[] = [];
    const walk = (node: unknown, at: string) => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${at}/${i}`));
      if (!node || typeof node !== "object") return;
      const n = node as Record<string, unknown>;
      if ((n.type !== undefined || n.oneOf !== undefined || n.const !== undefined) && typeof n.description !== "string") missing.push(at);
      for (const [k, v] of Object.entries(n)) if (k !== "if") walk(v, `${at}/${k}`);
    };
    walk(schema, "");
    expect(missing).toEqual([]);
  });
});
