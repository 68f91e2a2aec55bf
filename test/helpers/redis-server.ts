import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createServer, connect } from "node:net";
import { makeTempDir } from "./git-fixture.js";

/** Why Redis tests cannot run here, or undefined when redis-server is on PATH. */
export function explainNoRedis(): string | undefined {
  const r = spawnSync("redis-server", ["--version"], { encoding: "utf8" });
  return r.status === 0 ? undefined : "redis-server is not installed (apt-get install redis-server); skipping the Redis queue tests";
}

export interface RedisHandle {
  port: number;
  url: string;
  /** SIGKILL, as a crash would. */
  kill(): Promise<void>;
  /** A new server on the same port and folder, empty (no persistence): what a restarted Redis without a save file looks like. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

async function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === "object" && addr ? addr.port : 0));
    });
  });
}

/** Sends PING (with AUTH first when a password is set) until the server answers +PONG. */
async function waitForPong(port: number, password: string | undefined, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const sock = connect(port, "127.0.0.1");
      let buf = "";
      sock.on("data", (d) => {
        buf += d.toString();
        if (buf.includes("+PONG")) {
          sock.destroy();
          resolve(true);
        }
      });
      sock.on("error", () => resolve(false));
      sock.on("connect", () => sock.write(`${password ? `AUTH ${password}\r\n` : ""}PING\r\n`));
      setTimeout(() => {
        sock.destroy();
        resolve(false);
      }, 500);
    });
    if (ok) return;
    if (Date.now() > end) throw new Error(`redis-server on port ${port} did not answer within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A private redis-server on a free port in a temp folder, no persistence; stop() it in afterAll. */
export async function startRedis(opts: { password?: string } = {}): Promise<RedisHandle> {
  const dir = await makeTempDir("redis");
  const port = await findFreePort();
  let child: ChildProcess | undefined;
  const args = [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--dir",
    dir,
    "--save",
    "",
    "--appendonly",
    "no",
    ...(opts.password ? ["--requirepass", opts.password] : []),
  ];
  const handle: RedisHandle = {
    port,
    url: `redis://${opts.password ? `:${opts.password}@` : ""}127.0.0.1:${port}`,
    async start() {
      child = spawn("redis-server", args, { stdio: "ignore" });
      await waitForPong(port, opts.password, 10_000);
    },
    async kill() {
      const c = child;
      if (!c || c.exitCode !== null) return;
      const gone = new Promise((r) => c.once("exit", r));
      c.kill("SIGKILL");
      await gone;
    },
    async stop() {
      await handle.kill();
    },
  };
  await handle.start();
  return handle;
}
