import { describe, expect, it } from "vitest";
import { describeDifference, firstJsonDifference, readZip } from "./fixtures-diff.js";

const json = (v: unknown) => Buffer.from(JSON.stringify(v, null, 1) + "\n");

/** A stored (uncompressed) zip with the given members, as npz_bytes writes them. */
function storedZip(members: [string, Buffer][]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const [name, data] of members) {
    const n = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(n.length, 26);
    locals.push(local, n, data);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt32LE(data.length, 20);
    entry.writeUInt32LE(data.length, 24);
    entry.writeUInt16LE(n.length, 28);
    entry.writeUInt32LE(offset, 42);
    central.push(entry, n);
    offset += 30 + n.length + data.length;
  }
  const cd = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(members.length, 8);
  end.writeUInt16LE(members.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

/** An .npy (format 1.0) of little-endian float64 values. */
function npy(shape: number[], values: number[]): Buffer {
  let header = `{'descr': '<f8', 'fortran_order': False, 'shape': (${shape.join(", ")}${shape.length === 1 ? "," : ""}), }`;
  header = header.padEnd(118, " ") + "\n";
  const data = Buffer.alloc(8 * values.length);
  values.forEach((v, i) => data.writeDoubleLE(v, 8 * i));
  const pre = Buffer.from([0x93, ...Buffer.from("NUMPY"), 1, 0, header.length & 0xff, header.length >> 8]);
  return Buffer.concat([pre, Buffer.from(header, "latin1"), data]);
}

describe("describeDifference", () => {
  it("JSON: the line and pointer of the first differing value, with the target and call of calls.json", () => {
    const a = {
      format: "lmr-calls/1",
      targets: [
        {
          symbol: "Lion.step",
          calls: [
            { index: 0, result: 1.5 },
            { index: 1, result: [1, 2] },
          ],
        },
      ],
    };
    const b = structuredClone(a);
    b.targets[0]!.calls[1]!.result = [1, 3];
    const d = describeDifference("fixtures/calls.json", json(a), json(b));
    expect(d.json_pointer).toBe("/targets/0/calls/1/result/1");
    expect(d.message).toBe(`line ${d.line}, /targets/0/calls/1/result/1 (Lion.step, call 1): committed 2, regenerated 3`);
    expect(json(a).toString().split("\n")[d.line! - 1]).toContain("2");
  });

  it("JSON: a key only on one side, a layout-only change, and the interpreter named in calls.json", () => {
    expect(firstJsonDifference({ a: 1 }, { a: 1, b: 2 }, "")).toEqual({ pointer: "/b", committed: expect.anything(), regenerated: 2 });
    expect(firstJsonDifference({ "x/y": [1] }, { "x/y": [1, 2] }, "")?.pointer).toBe("/x~1y/1");
    expect(describeDifference("f.json", Buffer.from('{"a": 1}\n'), Buffer.from('{\n "a": 1\n}\n')).message).toBe(
      "line 1: same JSON value, laid out differently",
    );
    const env = describeDifference("fixtures/calls.json", json({ environment: { python: "3.11.2" } }), json({ environment: { python: "3.12.1" } }));
    expect(env.message).toContain('/environment/python: committed "3.11.2", regenerated "3.12.1"');
    expect(env.hint).toContain("LMR_PYTHON");
  });

  it("text and binary files: the line, or the byte", () => {
    expect(describeDifference("fixtures/a.txt", Buffer.from("x\ny\n"), Buffer.from("x\nz\n")).message).toBe('line 2: committed "y", regenerated "z"');
    expect(describeDifference("fixtures/a.bin", Buffer.from([0, 1, 0xff]), Buffer.from([0, 2, 0xff])).message).toBe(
      "first difference at byte 1 (3 bytes committed, 3 regenerated)",
    );
  });

  it("npz: the member whose bytes differ, and its first differing element", () => {
    const committed = storedZip([
      ["a1.npy", npy([2, 3], [0, 1, 2, 3, 4, 5])],
      ["a2.npy", npy([1], [7])],
    ]);
    const regenerated = storedZip([
      ["a1.npy", npy([2, 3], [0, 1, 2, 3, 9, 5])],
      ["a2.npy", npy([1], [7])],
    ]);
    expect(readZip(committed)?.map((m) => m.name)).toEqual(["a1.npy", "a2.npy"]);
    const calls = { targets: [{ symbol: "f", calls: [{ index: 0, args: [{ __lmr__: "ndarray", key: "a1" }] }] }] };
    const d = describeDifference("fixtures/calls.npz", committed, regenerated, { regeneratedCalls: calls });
    expect(d.member).toBe("a1.npy");
    expect(d.message).toBe(
      "member a1.npy: first difference at element 4 (index (1, 1) of shape (2, 3), dtype <f8); the regenerated calls.json uses it at /targets/0/calls/0/args/0 (f, call 0)",
    );
  });

  it("npz: members on one side only, and the same members in another zip", () => {
    const a = storedZip([["a1.npy", npy([1], [1])]]);
    const b = storedZip([["b1.npy", npy([1], [2])]]);
    expect(describeDifference("x.npz", a, b).message).toBe("member a1.npy differs (committed only: a1.npy; regenerated only: b1.npy)");
    const padded = Buffer.concat([a.subarray(0, a.length - 2), Buffer.from([1, 0, 0x20])]); // a one-byte zip comment
    expect(describeDifference("x.npz", a, padded).message).toContain("the zip's own metadata differs");
  });
});
