import { afterEach, describe, expect, it } from "vitest";
import { LmrError } from "../core/errors.js";
import { parseQueueUrl } from "./connection.js";

describe("parseQueueUrl", () => {
  afterEach(() => {
    delete process.env.LMR_REDIS_PASSWORD;
  });

  it("reads host, port, db and credentials, and never shows the password", () => {
    const c = parseQueueUrl("redis://alice:p%40ss@queue.internal:6380/2");
    expect(c.options).toMatchObject({ host: "queue.internal", port: 6380, db: 2, username: "alice", password: "p@ss", maxRetriesPerRequest: null });
    expect(c.options.tls).toBeUndefined();
    expect(c.display).toBe("redis://alice:***@queue.internal:6380/2");
  });

  it("defaults to port 6379 and db 0, takes the password from $LMR_REDIS_PASSWORD, and turns on TLS for rediss://", () => {
    process.env.LMR_REDIS_PASSWORD = "from-env";
    const c = parseQueueUrl("rediss://redis.example.org");
    expect(c.options).toMatchObject({ host: "redis.example.org", port: 6379, db: 0, password: "from-env", tls: { servername: "redis.example.org" } });
    expect(c.display).toBe("rediss://:***@redis.example.org:6379/0");
  });

  it("refuses what is not a Redis URL, naming the flag and the fix, with the password masked", () => {
    for (const bad of ["localhost:6379", "http://h:1", "redis://:pw@h/x"]) {
      let err: unknown;
      try {
        parseQueueUrl(bad);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(LmrError);
      expect((err as LmrError).kind).toBe("usage");
      expect((err as LmrError).pointer).toBe("--queue");
      expect((err as LmrError).hint).toMatch(/redis:\/\//);
      expect((err as LmrError).message).not.toContain(":pw@");
    }
  });
});
