// The page's script: the official MCP TypeScript client against the catalog demo on another
// origin. On each revision it lists the tools and calls catalog.search; on 2026-07-28 it also
// calls catalog.stock, whose `tenant` argument the tool mirrors into Mcp-Param-Tenant. The
// client does not mirror arguments into headers in a browser, so the page sends the header
// itself, as the spec says browser callers must (and the server's CORS policy grants it).
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const server = new URL(new URLSearchParams(location.search).get("server") ?? "http://127.0.0.1:8080/mcp");
document.getElementById("server").textContent = server.href;
document.getElementById("origin").textContent = location.origin;

function show(section, text, className) {
  const li = document.createElement("li");
  li.textContent = text;
  if (className) li.className = className;
  section.querySelector(".results").append(li);
}

async function connect(pin, headers) {
  // 2026-07-28 is pinned; a 2025-11-25 client initializes (a session) as 2025-era clients do.
  const options = pin === "2026-07-28" ? { versionNegotiation: { mode: { pin } } } : {};
  const client = new Client({ name: "tollgate-browser", version: "1.0.0" }, options);
  await client.connect(new StreamableHTTPClientTransport(server, headers ? { requestInit: { headers } } : undefined));
  return client;
}

async function run(pin, id) {
  const section = document.getElementById(id);
  const status = section.querySelector(".status");
  try {
    const client = await connect(pin);
    show(section, `revision: ${client.getNegotiatedProtocolVersion?.() ?? client.protocolVersion ?? "?"}`, "revision");
    const { tools } = await client.listTools();
    show(section, `tools: ${tools.map((t) => t.name).join(", ")}`, "tools");
    const search = await client.callTool({ name: "catalog.search", arguments: { query: "tea" } });
    show(section, `search: ${search.structuredContent.items.map((i) => i.sku).join(", ")}`, "search");
    await client.close();
    if (pin === "2026-07-28") {
      const mirrored = await connect(pin, { "Mcp-Param-Tenant": "acme" });
      const stock = await mirrored.callTool({ name: "catalog.stock", arguments: { tenant: "acme", sku: "TEA-001" } });
      show(section, `stock: ${stock.structuredContent.inStock}`, "stock");
      await mirrored.close();
    }
    status.textContent = "ok";
  } catch (error) {
    status.textContent = `error: ${error?.message ?? error}`;
    status.className = "status error";
  }
}

await run("2026-07-28", "r2026");
await run("2025-11-25", "r2025");
document.getElementById("done").hidden = false;
