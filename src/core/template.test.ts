import { describe, expect, it } from "vitest";
import { renderTemplate } from "./template.js";

describe("renderTemplate", () => {
  it("inserts values, including dotted names, and prints nothing for missing ones", () => {
    expect(renderTemplate("{{a}}-{{b.c}}-{{missing}}-{{n}}", { a: "x", b: { c: "y" }, n: 3 })).toBe("x-y--3");
  });

  it("shows a section for a truthy value, repeats it for a list, and inverts with ^", () => {
    const t = "{{#on}}on {{/on}}{{^on}}off {{/on}}{{#items}}[{{name}}]{{/items}}{{^items}}none{{/items}}";
    expect(renderTemplate(t, { on: true, items: [{ name: "a" }, { name: "b" }] })).toBe("on [a][b]");
    expect(renderTemplate(t, { on: "", items: [] })).toBe("off none");
  });

  it("lets an item shadow outer names and reach the others; {{.}} is the item", () => {
    const t = "{{#xs}}{{.}}/{{sep}} {{/xs}}{{#ys}}{{k}}{{/ys}}";
    expect(renderTemplate(t, { xs: ["a", "b"], sep: "!", k: "outer", ys: [{ k: "inner" }, {}] })).toBe("a/! b/! innerouter");
  });

  it("drops the lines of section and comment tags that stand alone", () => {
    const t = ["start", "{{! a note }}", "{{#xs}}", "- {{.}}", "{{/xs}}", "  {{^ys}}  ", "nothing", "{{/ys}}", "end {{#on}}inline{{/on}}", ""].join("\n");
    expect(renderTemplate(t, { xs: ["a", "b"], ys: [], on: true })).toBe("start\n- a\n- b\nnothing\nend inline\n");
  });

  it("reports unbalanced sections with the template's name", () => {
    expect(() => renderTemplate("{{#a}}x", {}, "t.tmpl")).toThrow(/\{\{#a\}\} is never closed/);
    expect(() => renderTemplate("{{#a}}x{{/b}}", {}, "t.tmpl")).toThrow(/closes \{\{#a\}\}/);
    expect(() => renderTemplate("x{{/b}}", {})).toThrow(/closes nothing/);
  });
});
