/** A pip requirement specifier we can put in environment.requirements: a name, extras, versions, a marker. */
const SPECIFIER =
  /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:\s*\[[A-Za-z0-9._,\s-]*\])?\s*(?:(?:===?|~=|!=|<=?|>=?)\s*[A-Za-z0-9.*+!_-]+\s*(?:,\s*(?:===?|~=|!=|<=?|>=?)\s*[A-Za-z0-9.*+!_-]+\s*)*)?(?:;.*)?$/;

/**
 * The plain specifiers of a requirements.txt: comments, options (-r, -e,
 * --index-url), URLs and local paths are left out; duplicates once.
 */
export function parseRequirements(text: string): { requirements: string[]; skipped: string[] } {
  const requirements: string[] = [];
  const skipped: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/(^|\s)#.*$/, "").trim();
    if (line === "") continue;
    if (SPECIFIER.test(line) && !/:\/\//.test(line)) {
      const spec = line
        .replace(/\s+/g, " ")
        .replace(/ ?([<>=!~]=?|===) ?/g, "$1")
        .replace(/ ?, ?/g, ",")
        .replace(/ ?; ?/, "; ");
      if (!requirements.includes(spec)) requirements.push(spec);
    } else {
      skipped.push(line);
    }
  }
  return { requirements, skipped };
}
