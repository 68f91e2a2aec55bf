import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One request the server saw. */
export interface SeenRequest {
  path: string;
  range?: string;
}

/**
 * A real HTTP server on 127.0.0.1 serving fixed bytes by path, with Range
 * support (206 / 416) the way arXiv answers, a request log, and a switch that
 * cuts the next response for a path after some bytes (a dropped connection).
 */
export class PdfServer {
  readonly seen: SeenRequest[] = [];
  private readonly files = new Map<string, Buffer>();
  private readonly cuts = new Map<string, { bytes: number; until: () => Promise<boolean> }>();
  private server: Server | undefined;
  private port = 0;

  serve(path: string, body: Buffer): this {
    this.files.set(path, body);
    return this;
  }

  /**
   * The next response for `path` sends `bytes` bytes of the body, then the
   * connection drops once `until` says the client has them (a client may drop
   * bytes it had not consumed when the connection breaks: waiting makes the
   * test exact).
   */
  cutNext(path: string, bytes: number, until: () => Promise<boolean> = async () => true): void {
    this.cuts.set(path, { bytes, until });
  }

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => this.answer(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.port = (this.server!.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  private answer(req: IncomingMessage, res: import("node:http").ServerResponse): void {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const range = req.headers.range;
    this.seen.push({ path, ...(range !== undefined ? { range } : {}) });
    const body = this.files.get(path);
    if (!body) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    let start = 0;
    const m = range !== undefined ? /^bytes=(\d+)-$/.exec(range) : null;
    if (m) {
      start = Number(m[1]);
      if (start >= body.length) {
        res.writeHead(416, { "content-range": `bytes */${body.length}` }).end();
        return;
      }
      res.writeHead(206, {
        "content-type": "application/pdf",
        "content-length": body.length - start,
        "content-range": `bytes ${start}-${body.length - 1}/${body.length}`,
      });
    } else {
      res.writeHead(200, { "content-type": "application/pdf", "content-length": body.length });
    }
    const rest = body.subarray(start);
    const cut = this.cuts.get(path);
    if (cut === undefined) {
      res.end(rest);
      return;
    }
    this.cuts.delete(path);
    // send the first bytes, then drop the connection before the promised length
    res.write(rest.subarray(0, cut.bytes));
    const started = Date.now();
    const poll = async (): Promise<void> => {
      if ((await cut.until()) || Date.now() - started > 10_000) res.destroy();
      else setTimeout(() => void poll(), 10);
    };
    void poll();
  }
}
