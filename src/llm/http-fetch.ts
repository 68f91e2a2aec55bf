import http from "node:http";
import https from "node:https";

/**
 * A `fetch` for the OpenAI SDK over node:http(s) with keep-alive agents. The
 * global fetch (undici) costs more CPU per request than node:http: against a
 * local server answering in 50 ms at -j 8 it reached 0.90 of the ideal rate on
 * this machine's 2 cores, and that bounds `lmr generate` (npm run bench --
 * generate measures both). Bodies that are not bytes or text (streams, forms)
 * and Request objects go to the global fetch: the chat API sends JSON text.
 */
export function createHttpFetch(): typeof fetch {
  const agents = { http: new http.Agent({ keepAlive: true, maxSockets: 256 }), https: new https.Agent({ keepAlive: true, maxSockets: 256 }) };
  const httpFetch = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    if (input instanceof Request) return fetch(input, init);
    const url = typeof input === "string" ? new URL(input) : input;
    const body = init.body;
    const bytes =
      body === undefined || body === null
        ? undefined
        : typeof body === "string"
          ? body
          : body instanceof ArrayBuffer
            ? Buffer.from(body)
            : ArrayBuffer.isView(body)
              ? Buffer.from(body.buffer, body.byteOffset, body.byteLength)
              : null;
    if (bytes === null || (url.protocol !== "http:" && url.protocol !== "https:")) return fetch(input, init);
    const signal = init.signal ?? undefined;
    return new Promise<Response>((resolve, reject) => {
      if (signal?.aborted) return reject(abortError());
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((value, name) => (headers[name] = value));
      if (bytes !== undefined && headers["content-length"] === undefined) headers["content-length"] = String(Buffer.byteLength(bytes));
      const secure = url.protocol === "https:";
      const req = (secure ? https : http).request(url, { method: init.method ?? "GET", headers, agent: secure ? agents.https : agents.http }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (d: Buffer) => chunks.push(d));
        res.on("end", () => {
          signal?.removeEventListener("abort", onAbort);
          const out = new Headers();
          for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) out.set(name, Array.isArray(value) ? value.join(", ") : value);
          const status = res.statusCode ?? 0;
          // a status with no body (204, 304) cannot carry one in a Response
          const noBody = status === 204 || status === 205 || status === 304 || init.method === "HEAD";
          resolve(new BufferedResponse(noBody ? null : Buffer.concat(chunks), { status, statusText: res.statusMessage ?? "", headers: out }));
        });
        res.on("error", fail);
      });
      function fail(err: unknown): void {
        signal?.removeEventListener("abort", onAbort);
        reject(err);
      }
      function onAbort(): void {
        req.destroy();
        fail(abortError());
      }
      signal?.addEventListener("abort", onAbort, { once: true });
      req.on("error", fail);
      req.end(bytes);
    });
  };
  return httpFetch as typeof fetch;
}

/** What a spec-compliant fetch rejects with when its signal aborts: the SDK reads `name`. */
function abortError(): Error {
  return new DOMException("This operation was aborted", "AbortError");
}

/**
 * A Response whose body is already in memory: text(), json() and
 * arrayBuffer() decode the buffer directly instead of going through a web
 * stream (the SDK reads every reply with json(); that stream cost the event
 * loop CPU on lmr generate's request path). Once someone asks for `body`, the
 * stream is made and every read goes through it, so the rules of a fetch
 * Response (one read, bodyUsed) hold either way.
 */
class BufferedResponse extends Response {
  readonly #bytes: Buffer | null;
  #streamed: Response | undefined;
  #used = false;

  constructor(bytes: Buffer | null, init: ResponseInit) {
    super(null, init);
    this.#bytes = bytes;
  }

  override get body(): ReadableStream<Uint8Array<ArrayBuffer>> | null {
    if (this.#bytes === null) return null;
    this.#streamed ??= new Response(this.#used ? new Uint8Array(0) : new Uint8Array(this.#bytes));
    return this.#streamed.body;
  }

  override get bodyUsed(): boolean {
    return this.#used || (this.#streamed?.bodyUsed ?? false);
  }

  override text(): Promise<string> {
    if (this.#streamed) return this.#streamed.text();
    return this.#take().then((b) => b.toString("utf8"));
  }

  override json(): Promise<unknown> {
    if (this.#streamed) return this.#streamed.json();
    return this.#take().then((b) => JSON.parse(b.toString("utf8")) as unknown);
  }

  override arrayBuffer(): Promise<ArrayBuffer> {
    if (this.#streamed) return this.#streamed.arrayBuffer();
    return this.#take().then((b) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer);
  }

  override clone(): Response {
    if (this.bodyUsed) throw new TypeError("Response.clone: Body has already been consumed.");
    if (this.#streamed) return this.#streamed.clone();
    return new BufferedResponse(this.#bytes, { status: this.status, statusText: this.statusText, headers: this.headers });
  }

  async #take(): Promise<Buffer> {
    if (this.#used) throw new TypeError("Body is unusable: Body has already been read");
    this.#used = true;
    return this.#bytes ?? Buffer.alloc(0);
  }
}
