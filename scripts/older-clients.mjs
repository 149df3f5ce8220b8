// The older official TypeScript clients against a server on loopback: SDK 1.17 (2025-06-18) and
// SDK 1.11 (2025-03-26) over Streamable HTTP, SDK 1.11 over stdio, SDK 1.0 (2024-11-05) over
// stdio. Each lists the tools, calls one and checks its revision's projection.
// Usage: node older-clients.mjs URL COMMAND [ARG...]   (COMMAND ARG... serves stdio)
// The tool called and what its text must hold: TOOL, ARGUMENTS (JSON) and EXPECT in the
// environment (default: the catalog demo's catalog.search for "tea", holding TEA-001).
import { Client as JuneClient } from "sdk-june/client/index.js";
import { StreamableHTTPClientTransport as JuneHttp } from "sdk-june/client/streamableHttp.js";
import { Client as MarchClient } from "sdk-march/client/index.js";
import { StreamableHTTPClientTransport } from "sdk-march/client/streamableHttp.js";
import { StdioClientTransport as MarchStdio } from "sdk-march/client/stdio.js";
import { Client as NovemberClient } from "sdk-november/client/index.js";
import { StdioClientTransport as NovemberStdio } from "sdk-november/client/stdio.js";

const [url, command, ...args] = process.argv.slice(2);
const tool = process.env.TOOL ?? "catalog.search";
const toolArguments = JSON.parse(process.env.ARGUMENTS ?? '{"query":"tea"}');
const expected = process.env.EXPECT ?? "TEA-001";
const stdio = { command, args, stderr: "ignore" };

async function exercise(label, client, transport, revision) {
  await client.connect(transport);
  const tools = await client.listTools();
  const names = tools.tools.map((t) => t.name);
  if (!names.includes(tool)) throw new Error(`${label}: ${tool} not listed: ${names}`);
  const listed = tools.tools.find((t) => t.name === tool);
  // Output schemas and structured content arrived with 2025-06-18.
  const structured = revision >= "2025-06-18";
  if (!structured && "outputSchema" in listed) throw new Error(`${label}: outputSchema on ${revision}`);
  const result = await client.callTool({ name: tool, arguments: toolArguments });
  const text = result.content?.[0]?.text ?? "";
  if (!text.includes(expected)) throw new Error(`${label}: unexpected result ${JSON.stringify(result)}`);
  if (!structured && "structuredContent" in result) throw new Error(`${label}: structuredContent on ${revision}`);
  await client.close();
  console.log(`${label}: ${names.length} tools listed, ${tool} called (${revision} projection)`);
}

const info = { name: "older-clients", version: "1.0.0" };
await exercise("TypeScript SDK 1.17 over HTTP", new JuneClient(info), new JuneHttp(new URL(url)), "2025-06-18");
await exercise(
  "TypeScript SDK 1.11 over HTTP",
  new MarchClient(info),
  new StreamableHTTPClientTransport(new URL(url)),
  "2025-03-26",
);
await exercise("TypeScript SDK 1.11 over stdio", new MarchClient(info), new MarchStdio(stdio), "2025-03-26");
await exercise(
  "TypeScript SDK 1.0 over stdio",
  new NovemberClient(info, { capabilities: {} }),
  new NovemberStdio(stdio),
  "2024-11-05",
);
