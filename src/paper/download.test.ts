import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DownloadError, downloadResumable } from "./download.js";

const BODY = Buffer.from("%PDF-1.4\n" + "x".repeat(5000) + "\n%%EOF\n", "latin1");

describe("downloadResumable against servers that answer Range requests differently", () => {
  let server: Server;
  let url: string;
  let dir: string;
  const ranges: (string | undefined)[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "lmr-download-"));
    server = createServer((req, res) => {
      ranges.push(req.headers.range);
      if (req.url === "/ignores-range") res.writeHead(200, { "content-length": BODY.length }).end(BODY);
      else if (req.url === "/complete") res.writeHead(416, { "content-range": `bytes */${BODY.length}` }).end();
      else if (req.url === "/gone") res.writeHead(404).end();
      else res.writeHead(503).end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await rm(dir, { recursive: true, force: true });
  });

  it("starts over when the server ignores the Range header", async () => {
    const part = join(dir, "a.part");
    await writeFile(part, "garbage that is not a prefix");
    const r = await downloadResumable(`${url}/ignores-range`, part);
    expect(ranges.at(-1)).toBe("bytes=28-");
    expect(r).toEqual({ bytes: BODY.length, requests: 1, resumedFrom: 28 });
    expect((await readFile(part)).equals(BODY)).toBe(true);
  });

  it("takes a 416 whose total is the part's size as complete", async () => {
    const part = join(dir, "b.part");
    await writeFile(part, BODY);
    expect((await downloadResumable(`${url}/complete`, part)).bytes).toBe(BODY.length);
  });

  it("does not ask again for a part of the pinned size", async () => {
    const part = join(dir, "c.part");
    await writeFile(part, BODY);
    const before = ranges.length;
    expect(await downloadResumable(`${url}/gone`, part, { bytes: BODY.length })).toEqual({ bytes: BODY.length, requests: 0 });
    expect(ranges.length).toBe(before);
  });

  it("stops at once on 404 and retries a 503 before giving up", async () => {
    await expect(downloadResumable(`${url}/gone`, join(dir, "d.part"))).rejects.toMatchObject({ reason: "http", status: 404 });
    const before = ranges.length;
    const err = await downloadResumable(`${url}/busy`, join(dir, "e.part"), { attempts: 2 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DownloadError);
    expect(err).toMatchObject({ reason: "network", message: "HTTP 503 Service Unavailable" });
    expect(ranges.length - before).toBe(2);
  });
});
