import { PassThrough } from "node:stream";
import net from "node:net";
import { rm } from "node:fs/promises";

export interface ResultsSocket {
  path: string;
  /** The records of the first connection (the harness connects before any code under test runs). */
  stream: PassThrough;
  /** Ends the stream if no one ever connected (the harness died before it could). */
  endIfUnused(): void;
  /** Connections after the first: someone other than the harness spoke on the channel. */
  extraConnections(): number;
  close(): Promise<void>;
}

/**
 * The docker backend's results channel: a unix socket the container gets
 * through a bind mount. Only the first connection is read; the harness makes
 * it before it imports pytest, so nothing the tests run can come first, and
 * later connections are counted and make the channel untrusted.
 */
export async function openResultsSocket(path: string): Promise<ResultsSocket> {
  const stream = new PassThrough();
  let first: net.Socket | undefined;
  let extra = 0;
  const server = net.createServer((sock) => {
    if (first) {
      extra++;
      sock.destroy();
      return;
    }
    first = sock;
    sock.on("error", () => stream.end());
    sock.pipe(stream);
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolveListen());
  });
  return {
    path,
    stream,
    // A tick later: an accepted connection may still be queued behind the exit event.
    endIfUnused: () => {
      setImmediate(() => {
        if (!first) stream.end();
      });
    },
    extraConnections: () => extra,
    close: async () => {
      first?.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      await rm(path, { force: true });
    },
  };
}
