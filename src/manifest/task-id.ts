const MAX_ID = 80;

/** Lowercase letters, digits and single hyphens: "1-DPO" → "1-dpo", "preference_loss" → "preference-loss". */
export function slugify(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

/** Task id from a paper folder and a function: ("1-DPO", "preference_loss") → "dpo-preference-loss". */
export function deriveTaskId(folderName: string, ...names: string[]): string {
  const paper = slugify(folderName.replace(/^\d+[-_ ]+/, "")) || slugify(folderName);
  const id = [paper, ...names.map(slugify)].filter((s) => s !== "").join("-");
  return id.length <= MAX_ID ? id : id.slice(0, MAX_ID).replace(/-+$/, "");
}

export function isTaskId(s: string): boolean {
  return s.length <= MAX_ID && /^[a-z0-9]+(-[a-z0-9]+)*$/.test(s);
}

/** A Python module name for a task's placeholder test: tests/test_<id with underscores>.py. */
export function testFileFor(id: string): string {
  return `tests/test_${id.replace(/-/g, "_")}.py`;
}
