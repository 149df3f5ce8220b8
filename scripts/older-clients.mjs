// The older official TypeScript clients against the catalog demo: SDK 1.11 (2025-03-26) over
// Streamable HTTP and stdio, SDK 1.0 (2024-11-05) over stdio. Each lists the tools, calls
// catalog.search and checks the negotiated revision. Usage: node older-clients.mjs URL DEMO_BINARY
import { Client as MarchClient } from "sdk-march/client/index.js";
import { StreamableHTTPClientTransport } from "sdk-march/client/streamableHttp.js";
import { StdioClientTransport as MarchStdio } from "sdk-march/client/stdio.js";
import { Client as NovemberClient } from "sdk-november/client/index.js";
import { StdioClientTransport as NovemberStdio } from "sdk-november/client/stdio.js";

const [url, binary] = process.argv.slice(2);

async function exercise(label, client, transport, revision) {
  await client.connect(transport);
  const tools = await client.listTools();
  const names = tools.tools.map((t) => t.name);
  if (!names.includes("catalog.search")) throw new Error(`${label}: catalog.search not listed: ${names}`);
  const search = tools.tools.find((t) => t.name === "catalog.search");
  if ("outputSchema" in search) throw new Error(`${label}: outputSchema on ${revision}`);
  const result = await client.callTool({ name: "catalog.search", arguments: { query: "tea" } });
  const text = result.content?.[0]?.text ?? "";
  if (!text.includes("TEA-001")) throw new Error(`${label}: unexpected result ${JSON.stringify(result)}`);
  if ("structuredContent" in result) throw new Error(`${label}: structuredContent on ${revision}`);
  await client.close();
  console.log(`${label}: ${names.length} tools listed, catalog.search called (${revision} projection)`);
}

const info = { name: "older-clients", version: "1.0.0" };
await exercise(
  "TypeScript SDK 1.11 over HTTP",
  new MarchClient(info),
  new StreamableHTTPClientTransport(new URL(url)),
  "2025-03-26",
);
await exercise(
  "TypeScript SDK 1.11 over stdio",
  new MarchClient(info),
  new MarchStdio({ command: binary, args: ["--stdio"], stderr: "ignore" }),
  "2025-03-26",
);
await exercise(
  "TypeScript SDK 1.0 over stdio",
  new NovemberClient(info, { capabilities: {} }),
  new NovemberStdio({ command: binary, args: ["--stdio"], stderr: "ignore" }),
  "2024-11-05",
);
