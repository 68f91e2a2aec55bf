import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** What the server does with one request. */
export type ScriptedAction =
  | { kind: "reply"; text: string; delayMs?: number; finishReason?: string }
  | { kind: "status"; status: number; headers?: Record<string, string>; body?: string }
  /** Never answers (the client's timeout must end it). */
  | { kind: "hang" }
  /** 200 with a Content-Type of JSON and a body that is not JSON. */
  | { kind: "malformed" };

export interface SeenRequest {
  path: string;
  authorization: string | undefined;
  body: {
    model?: string;
    messages?: { role: string; content: string }[];
    temperature?: number;
    seed?: number;
    max_tokens?: number;
    response_format?: { type: string; json_schema?: { name: string; schema: object; strict?: boolean } };
  };
}

export interface ScriptedServer {
  /** http://127.0.0.1:PORT/v1 */
  baseUrl: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

/**
 * A local OpenAI-compatible server (POST /v1/chat/completions) on a free
 * port, answering each request as `script` says. Every request is counted,
 * the ones that hang included.
 */
export async function startScriptedServer(script: (req: SeenRequest, index: number) => ScriptedAction): Promise<ScriptedServer> {
  const requests: SeenRequest[] = [];
  const hanging = new Set<ServerResponse>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
        res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
        return;
      }
      let body: SeenRequest["body"] = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as SeenRequest["body"];
      } catch {
        // counted all the same
      }
      const seen: SeenRequest = { path: req.url, authorization: req.headers.authorization, body };
      requests.push(seen);
      const action = script(seen, requests.length - 1);
      switch (action.kind) {
        case "hang":
          hanging.add(res);
          res.on("close", () => hanging.delete(res));
          return;
        case "malformed":
          res.writeHead(200, { "content-type": "application/json" }).end('{"id": "x", "choices": [{"message": {"content": "unterminated');
          return;
        case "status":
          res
            .writeHead(action.status, { "content-type": "application/json", ...action.headers })
            .end(action.body ?? JSON.stringify({ error: { message: `scripted ${action.status}`, type: "scripted" } }));
          return;
        case "reply": {
          const send = (): void => {
            res.writeHead(200, { "content-type": "application/json" }).end(
              JSON.stringify({
                id: `chatcmpl-${requests.length}`,
                object: "chat.completion",
                created: 0,
                model: body.model ?? "scripted",
                choices: [{ index: 0, message: { role: "assistant", content: action.text }, finish_reason: action.finishReason ?? "stop" }],
                usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
              }),
            );
          };
          if (action.delayMs) setTimeout(send, action.delayMs);
          else send();
        }
      }
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** The task a prompt is for, told by the target names the prompt lists. */
export function taskOf(req: SeenRequest, byTarget: Record<string, string>): string | undefined {
  const user = req.body.messages?.find((m) => m.role === "user")?.content ?? "";
  const section = /# What to write\n([\s\S]*?)\n\n/.exec(user)?.[1] ?? user;
  return Object.entries(byTarget).find(([symbol]) => section.includes(`\`${symbol}\``))?.[1];
}
