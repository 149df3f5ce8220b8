// The interop server of scripts/interop-server.py on the older official TypeScript SDK (1.11.5,
// npm alias sdk-march, pinned by scripts/interop): 2025-03-26 over stdio and Streamable HTTP
// (sessions), with the same tools, resource, prompt and completion, so the client checks the
// same things there. Usage: node interop-server-older.mjs stdio | node interop-server-older.mjs http PORT
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { McpServer } from "sdk-march/server/mcp.js";
import { completable } from "sdk-march/server/completable.js";
import { StdioServerTransport } from "sdk-march/server/stdio.js";
import { StreamableHTTPServerTransport } from "sdk-march/server/streamableHttp.js";
// zod 3, as SDK 1.11 expects (pinned by scripts/interop as zod-march: a bare "zod" resolves to
// whichever version npm hoisted, zod 4 beside server-everything).
import { z } from "zod-march";

function build() {
  const server = new McpServer(
    { name: "tollgate-interop-older-ts", version: "1.0.0" },
    { capabilities: { logging: {} } },
  );
  server.tool("add", "Adds two integers.", { a: z.number().int(), b: z.number().int() }, async ({ a, b }) => ({
    content: [{ type: "text", text: String(a + b) }],
  }));
  server.tool("count", "Counts to steps, reporting progress and logging.", { steps: z.number().int() }, async ({ steps }, extra) => {
    const token = extra._meta?.progressToken;
    for (let i = 1; i <= steps; i++) {
      if (token !== undefined) {
        await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: i, total: steps } });
      }
    }
    await extra.sendNotification({ method: "notifications/message", params: { level: "info", data: `counted to ${steps}` } });
    return { content: [{ type: "text", text: `counted to ${steps}` }] };
  });
  server.resource("greeting", "interop://greeting", { mimeType: "text/plain" }, async (uri) => ({
    contents: [{ uri: uri.href, text: "hello from TypeScript" }],
  }));
  const languages = ["python", "rust", "typescript"];
  server.prompt(
    "review",
    "Asks for a code review in a language.",
    { language: completable(z.string(), (value) => languages.filter((l) => l.startsWith(value))) },
    ({ language }) => ({ messages: [{ role: "user", content: { type: "text", text: `Please review this ${language} code.` } }] }),
  );
  return server;
}

if (process.argv[2] === "http") {
  const sessions = new Map();
  createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    const id = req.headers["mcp-session-id"];
    let transport = id ? sessions.get(id) : undefined;
    if (!transport) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => sessions.set(sid, transport),
      });
      await build().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  }).listen(Number(process.argv[3]), "127.0.0.1");
} else {
  await build().connect(new StdioServerTransport());
}
