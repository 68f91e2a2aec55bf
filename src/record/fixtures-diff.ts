/*
 * The first difference between a committed fixture file and the one regenerated from
 * its driver or generator, said so that a person can find it: for JSON the line and the
 * JSON pointer (and, in calls.json, which target and call), for an .npz the member (and
 * the element), otherwise the line or byte offset. Pure functions over bytes.
 */

export interface FirstDifference {
  message: string;
  /** 1-based line of the committed file where it first differs (text files). */
  line?: number;
  /** JSON pointer of the first differing value (JSON files). */
  json_pointer?: string;
  /** The .npz member that differs first. */
  member?: string;
  hint?: string;
}

/** What else helps to explain a difference: the calls.json files of both sides. */
export interface DiffContext {
  committedCalls?: unknown;
  regeneratedCalls?: unknown;
}

export function describeDifference(file: string, committed: Buffer, regenerated: Buffer, ctx: DiffContext = {}): FirstDifference {
  if (file.endsWith(".npz")) return describeNpz(committed, regenerated, ctx);
  const a = utf8(committed);
  const b = utf8(regenerated);
  if (a === undefined || b === undefined) {
    const at = firstByte(committed, regenerated);
    return { message: `first difference at byte ${at} (${committed.length} bytes committed, ${regenerated.length} regenerated)` };
  }
  const line = firstLine(a, b);
  if (file.endsWith(".json")) {
    const parsed = [parseJson(a), parseJson(b)] as const;
    if (parsed[0].ok && parsed[1].ok) {
      const d = firstJsonDifference(parsed[0].value, parsed[1].value, "");
      if (d) {
        const where = callContext(d.pointer, parsed[1].value);
        const hint = d.pointer.startsWith("/environment")
          ? `the recording names its interpreter and libraries; regenerate under the same ones (LMR_PYTHON or --python), or record again and commit`
          : undefined;
        return {
          message: `line ${line}, ${d.pointer || "/"}${where}: committed ${show(d.committed)}, regenerated ${show(d.regenerated)}`,
          line,
          json_pointer: d.pointer,
          ...(hint ? { hint } : {}),
        };
      }
      return {
        message: `line ${line}: same JSON value, laid out differently`,
        line,
        hint: "write it with the layout the generator uses (regenerate it rather than editing it)",
      };
    }
  }
  return { message: `line ${line}: committed ${show(lineAt(a, line))}, regenerated ${show(lineAt(b, line))}`, line };
}

function utf8(buf: Buffer): string | undefined {
  const text = buf.toString("utf8");
  return Buffer.from(text, "utf8").equals(buf) ? text : undefined;
}

function firstByte(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return n;
}

function firstLine(a: string, b: string): number {
  const la = a.split("\n");
  const lb = b.split("\n");
  for (let i = 0; i < Math.max(la.length, lb.length); i++) if (la[i] !== lb[i]) return i + 1;
  return la.length;
}

const lineAt = (text: string, line: number): string | undefined => text.split("\n")[line - 1];

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

const escape = (key: string): string => key.replace(/~/g, "~0").replace(/\//g, "~1");
const MISSING = Symbol("missing");

/** The first place, in document order, where two JSON values differ. */
export function firstJsonDifference(a: unknown, b: unknown, pointer: string): { pointer: string; committed: unknown; regenerated: unknown } | undefined {
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      if (i >= a.length || i >= b.length)
        return { pointer: `${pointer}/${i}`, committed: i < a.length ? a[i] : MISSING, regenerated: i < b.length ? b[i] : MISSING };
      const d = firstJsonDifference(a[i], b[i], `${pointer}/${i}`);
      if (d) return d;
    }
    return undefined;
  }
  if (isObject(a) && isObject(b)) {
    for (const key of [...Object.keys(a), ...Object.keys(b).filter((k) => !(k in a))]) {
      const d = firstJsonDifference(key in a ? a[key] : MISSING, key in b ? b[key] : MISSING, `${pointer}/${escape(key)}`);
      if (d) return d;
    }
    return undefined;
  }
  return Object.is(a, b) ? undefined : { pointer, committed: a, regenerated: b };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** ` (Lion.step, call 3)` for a pointer into calls.json's targets; "" otherwise. */
function callContext(pointer: string, calls: unknown): string {
  const m = /^\/targets\/(\d+)(?:\/calls\/(\d+))?/.exec(pointer);
  if (!m || !isObject(calls) || !Array.isArray(calls.targets)) return "";
  const target = calls.targets[Number(m[1])] as { symbol?: unknown } | undefined;
  if (typeof target?.symbol !== "string") return "";
  return m[2] !== undefined ? ` (${target.symbol}, call ${m[2]})` : ` (${target.symbol})`;
}

function show(v: unknown): string {
  if (v === MISSING) return "nothing";
  const text = JSON.stringify(v) ?? String(v);
  return text.length <= 120 ? text : `${text.slice(0, 110)}… (${text.length} chars)`;
}

// ------------------------------------------------------------------------------- npz

interface ZipMember {
  name: string;
  method: number;
  data: Buffer;
}

/** The members of a zip file, from its central directory; undefined when it is not one. */
export function readZip(buf: Buffer): ZipMember[] | undefined {
  const min = Math.max(0, buf.length - 22 - 0xffff);
  let eocd = -1;
  for (let i = buf.length - 22; i >= min; i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) return undefined;
  const count = buf.readUInt16LE(eocd + 10);
  let at = buf.readUInt32LE(eocd + 16);
  const out: ZipMember[] = [];
  try {
    for (let k = 0; k < count; k++) {
      if (buf.readUInt32LE(at) !== 0x02014b50) return undefined;
      const method = buf.readUInt16LE(at + 10);
      const size = buf.readUInt32LE(at + 20);
      const nameLen = buf.readUInt16LE(at + 28);
      const extraLen = buf.readUInt16LE(at + 30);
      const commentLen = buf.readUInt16LE(at + 32);
      const local = buf.readUInt32LE(at + 42);
      const name = buf.toString("utf8", at + 46, at + 46 + nameLen);
      const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
      out.push({ name, method, data: buf.subarray(start, start + size) });
      at += 46 + nameLen + extraLen + commentLen;
    }
  } catch {
    return undefined;
  }
  return out;
}

function describeNpz(committed: Buffer, regenerated: Buffer, ctx: DiffContext): FirstDifference {
  const a = readZip(committed);
  const b = readZip(regenerated);
  if (!a || !b)
    return {
      message: `${!a ? "the committed file" : "the regenerated file"} is not a zip (.npz) file; first difference at byte ${firstByte(committed, regenerated)}`,
    };
  const names = new Set(b.map((m) => m.name));
  const only = (list: ZipMember[], other: Set<string>) => list.filter((m) => !other.has(m.name)).map((m) => m.name);
  const gone = only(a, names);
  const added = only(b, new Set(a.map((m) => m.name)));
  if (gone.length > 0 || added.length > 0) {
    const first = gone[0] ?? added[0]!;
    const refs = [gone[0] && usedAt(ctx.committedCalls, gone[0], "committed"), added[0] && usedAt(ctx.regeneratedCalls, added[0], "regenerated")]
      .filter(Boolean)
      .join("; ");
    const parts = [gone.length > 0 ? `committed only: ${gone.join(", ")}` : "", added.length > 0 ? `regenerated only: ${added.join(", ")}` : ""].filter(
      Boolean,
    );
    return {
      message: `member ${first} differs (${parts.join("; ")})${refs ? `; ${refs}` : ""}`,
      member: first,
      hint: "array members are named by a hash of their content: a changed array is a different member, and calls.json names the new one",
    };
  }
  for (const m of a) {
    const other = b.find((x) => x.name === m.name)!;
    if (!m.data.equals(other.data)) {
      const refs = usedAt(ctx.regeneratedCalls, m.name, "regenerated");
      return { message: `member ${m.name}: ${describeNpy(m, other)}${refs ? `; ${refs}` : ""}`, member: m.name };
    }
  }
  return {
    message: "the members are the same; the zip's own metadata differs (member order, timestamps or flags)",
    hint: "regenerate it rather than re-packing it",
  };
}

/** Where calls.json refers to an array member, e.g. `calls.json /targets/0/calls/2/args/0 (f, call 2)`. */
function usedAt(calls: unknown, member: string, side: string): string {
  if (calls === undefined) return "";
  const key = member.replace(/\.npy$/, "");
  const find = (v: unknown, pointer: string): string | undefined => {
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const hit = find(v[i], `${pointer}/${i}`);
        if (hit) return hit;
      }
    } else if (isObject(v)) {
      if (v.key === key && typeof v.__lmr__ === "string") return pointer;
      for (const [k, x] of Object.entries(v)) {
        const hit = find(x, `${pointer}/${escape(k)}`);
        if (hit) return hit;
      }
    }
    return undefined;
  };
  const at = find(calls, "");
  return at ? `the ${side} calls.json uses it at ${at}${callContext(at, calls)}` : "";
}

/** For two .npy members: dtype or shape, else the first differing element. */
function describeNpy(a: ZipMember, b: ZipMember): string {
  const ha = npyHeader(a);
  const hb = npyHeader(b);
  if (!ha || !hb) return `first difference at byte ${firstByte(a.data, b.data)} of the member`;
  if (ha.descr !== hb.descr) return `dtype ${ha.descr} committed, ${hb.descr} regenerated`;
  if (ha.shape.join(",") !== hb.shape.join(",")) return `shape (${ha.shape.join(", ")}) committed, (${hb.shape.join(", ")}) regenerated`;
  const off = firstByte(a.data.subarray(ha.start), b.data.subarray(hb.start));
  if (ha.itemsize <= 0) return `first difference at byte ${off} of the data`;
  const flat = Math.floor(off / ha.itemsize);
  return `first difference at element ${flat} (index (${unravel(flat, ha.shape, ha.fortran).join(", ")}) of shape (${ha.shape.join(", ")}), dtype ${ha.descr})`;
}

function npyHeader(m: ZipMember): { descr: string; shape: number[]; fortran: boolean; itemsize: number; start: number } | undefined {
  const d = m.data;
  if (m.method !== 0 || d.length < 10 || d[0] !== 0x93 || d.toString("latin1", 1, 6) !== "NUMPY") return undefined;
  const major = d[6]!;
  const len = major === 1 ? d.readUInt16LE(8) : d.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + len;
  const header = d.toString("latin1", major === 1 ? 10 : 12, start);
  const descr = /'descr':\s*'([^']*)'/.exec(header)?.[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (descr === undefined || shape === undefined) return undefined;
  const size = /^[<>|=]?([a-zA-Z])(\d+)$/.exec(descr);
  const itemsize = size ? Number(size[2]) * (size[1] === "U" ? 4 : 1) : 0;
  return {
    descr,
    shape: shape
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean)
      .map(Number),
    fortran: /'fortran_order':\s*True/.test(header),
    itemsize,
    start,
  };
}

function unravel(flat: number, shape: number[], fortran: boolean): number[] {
  if (shape.length === 0) return [];
  const dims = fortran ? [...shape] : [...shape].reverse();
  const out: number[] = [];
  for (const n of dims) {
    out.push(n > 0 ? flat % n : 0);
    flat = n > 0 ? Math.floor(flat / n) : 0;
  }
  return fortran ? out : out.reverse();
}
