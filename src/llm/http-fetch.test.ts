import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpFetch } from "./http-fetch.js";
import { classifyApiError, createChatCall } from "./client.js";

let server: Server;
let base: string;
const seen: { method: string; url: string; headers: Record<string, string | string[] | undefined>; body: string; socket: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (d: Buffer) => chunks.push(d));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body, socket: `${req.socket.remotePort}` });
      if (req.url?.startsWith("/hang")) return; // never answers
      if (req.url === "/empty") return res.writeHead(204).end();
      if (req.url?.startsWith("/limited"))
        return res.writeHead(429, { "retry-after": "7", "content-type": "application/json" }).end(JSON.stringify({ error: { message: "slow down" } }));
      if (req.url === "/half") {
        res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
        res.write('{"choices":');
        setTimeout(() => res.destroy(), 20);
        return;
      }
      if (req.url?.endsWith("/chat/completions")) {
        const parsed = JSON.parse(body) as { messages: { content: string }[] };
        return res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            choices: [{ index: 0, message: { role: "assistant", content: `echo: ${parsed.messages[0]!.content}` }, finish_reason: "stop" }],
            usage: { prompt_tokens: 3, completion_tokens: 2 },
          }),
        );
      }
      res.writeHead(200, { "content-type": "text/plain", "x-two": ["a", "b"] }).end(`got ${req.method} ${body}`);
    });
  });
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe("createHttpFetch", () => {
  it("sends method, headers and body, and answers with status, headers and body as fetch does", async () => {
    const f = createHttpFetch();
    const r = await f(`${base}/x`, { method: "POST", headers: { "content-type": "text/plain", "x-one": "1" }, body: "héllo" });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/plain");
    expect(r.headers.get("x-two")).toBe("a, b");
    expect(await r.text()).toBe("got POST héllo");
    const last = seen.at(-1)!;
    expect(last.headers["x-one"]).toBe("1");
    expect(last.headers["content-length"]).toBe(String(Buffer.byteLength("héllo")));
    const h = await f(new URL(`${base}/y`), { headers: new Headers({ "x-one": "2" }) });
    expect(await h.text()).toBe("got GET ");
    expect(seen.at(-1)!.headers["x-one"]).toBe("2");
  });

  it("keeps the connection alive between requests", async () => {
    const f = createHttpFetch();
    for (let i = 0; i < 3; i++) await (await f(`${base}/k`, { method: "POST", body: String(i) })).text();
    const sockets = new Set(seen.slice(-3).map((s) => s.socket));
    expect(sockets.size).toBe(1);
  });

  it("gives a 204 no body, and a 429 its headers", async () => {
    const f = createHttpFetch();
    const empty = await f(`${base}/empty`);
    expect(empty.status).toBe(204);
    expect(await empty.text()).toBe("");
    const limited = await f(`${base}/limited`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("7");
  });

  it("rejects with an AbortError when the signal aborts, before or during the request", async () => {
    const f = createHttpFetch();
    const ac = new AbortController();
    const pending = f(`${base}/hang`, { signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    await expect(f(`${base}/x`, { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: "AbortError" });
  });

  it("reads the body once as text, JSON, bytes or a stream, as a fetch Response does", async () => {
    const f = createHttpFetch();
    const asJson = await f(`${base}/v1/chat/completions`, { method: "POST", body: JSON.stringify({ messages: [{ content: "é" }] }) });
    expect(asJson).toBeInstanceOf(Response);
    expect(asJson.ok).toBe(true);
    expect(asJson.bodyUsed).toBe(false);
    expect(await asJson.json()).toMatchObject({ choices: [{ message: { content: "echo: é" } }] });
    expect(asJson.bodyUsed).toBe(true);
    await expect(asJson.text()).rejects.toThrow(TypeError);

    const twice = await f(`${base}/c`, { method: "POST", body: "c" });
    const copy = twice.clone();
    expect([await twice.text(), await copy.text(), copy.headers.get("content-type")]).toEqual(["got POST c", "got POST c", "text/plain"]);

    const bytes = await f(`${base}/b`, { method: "POST", body: "ü" });
    expect(Buffer.from(await bytes.arrayBuffer()).toString("utf8")).toBe("got POST ü");

    const streamed = await f(`${base}/s`, { method: "POST", body: "z" });
    const chunks: Uint8Array[] = [];
    for await (const c of streamed.body!) chunks.push(c);
    expect(Buffer.concat(chunks).toString("utf8")).toBe("got POST z");
    expect(streamed.bodyUsed).toBe(true);
    await expect(streamed.json()).rejects.toThrow(TypeError);

    const empty = await f(`${base}/empty`);
    expect(empty.body).toBeNull();
  });

  it("rejects when the connection is refused or the body is cut short", async () => {
    const f = createHttpFetch();
    await expect(f("http://127.0.0.1:1/x")).rejects.toMatchObject({ code: "ECONNREFUSED" });
    await expect(f(`${base}/half`)).rejects.toThrow();
  });
});

describe("createChatCall over createHttpFetch", () => {
  it("reads a completion, and the SDK classifies a timeout and a 429 from it", async () => {
    const chat = createChatCall({ baseUrl: `${base}/v1`, apiKey: "k", timeoutMs: 2000 });
    const reply = await chat({ model: "m", messages: [{ role: "user", content: "hi" }], temperature: 0 });
    expect(reply).toMatchObject({ text: "echo: hi", finish_reason: "stop", usage: { prompt_tokens: 3, completion_tokens: 2 } });
    expect(seen.at(-1)!.headers.authorization).toBe("Bearer k");

    const slow = createChatCall({ baseUrl: `${base}/hang`, apiKey: "k", timeoutMs: 200 });
    const timedOut = await slow({ model: "m", messages: [{ role: "user", content: "hi" }], temperature: 0 }).catch((e: unknown) => e);
    expect(classifyApiError(timedOut)).toMatchObject({ kind: "timeout", retryable: true });

    const limited = createChatCall({ baseUrl: `${base}/limited`, apiKey: "k", timeoutMs: 2000 });
    const err = await limited({ model: "m", messages: [{ role: "user", content: "hi" }], temperature: 0 }).catch((e: unknown) => e);
    expect(classifyApiError(err)).toMatchObject({ kind: "rate-limit", status: 429, retryAfterMs: 7000 });
  });
});
