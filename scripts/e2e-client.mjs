// End-to-end check with the official TypeScript MCP client (@modelcontextprotocol/client):
// connects to a running Tollgate catalog demo over 2026-07-28, lists its tools and calls each,
// then does the same over 2025-11-25 (initialize and a session) on the same URL, including a call
// whose stream the server closes early and the client resumes with Last-Event-ID.
// Usage: node client.mjs http://127.0.0.1:PORT/mcp [path/to/catalog]  (the binary adds stdio)
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createTaskSessionFromClient, resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";

const url = new URL(process.argv[2] ?? "http://127.0.0.1:8080/mcp");
const client = new Client(
  { name: "tollgate-e2e", version: "1.0.0" },
  { versionNegotiation: { mode: { pin: "2026-07-28" } }, capabilities: { elicitation: {} } },
);
// catalog.reserve asks how many: the client answers through its elicitation handler (on
// 2026-07-28 inside an input_required round trip, on 2025-11-25 as a request on the stream).
const asked = [];
const answerQuantity = async (request) => {
  asked.push(request.params.message);
  return { action: "accept", content: { quantity: 3 } };
};
client.setRequestHandler("elicitation/create", answerQuantity);
await client.connect(new StreamableHTTPClientTransport(url));
assert.equal(client.getNegotiatedProtocolVersion?.() ?? client.protocolVersion ?? "2026-07-28", "2026-07-28");

const { tools } = await client.listTools();
assert.deepEqual(tools.map((t) => t.name), ["catalog.search", "catalog.get", "catalog.stock", "catalog.inventory", "catalog.reserve", "catalog.restock", "catalog.whoami", "catalog.seasonal"]);
const stock = tools.find((t) => t.name === "catalog.stock");
assert.equal(stock.inputSchema.properties.tenant["x-mcp-header"], "Tenant");

const search = await client.callTool({ name: "catalog.search", arguments: { query: "tea", limit: 5 } });
assert.equal(search.isError ?? false, false);
assert.deepEqual(search.structuredContent.items.map((i) => i.sku), ["TEA-001", "POT-001"]);

const get = await client.callTool({ name: "catalog.get", arguments: { sku: "TEA-001" } });
assert.deepEqual(get.content.map((c) => c.type), ["text", "resource_link", "image"]);
assert.equal(get.content[2].mimeType, "image/png");

// The client mirrors `tenant` into Mcp-Param-Tenant from the tool's x-mcp-header declaration.
const level = await client.callTool({ name: "catalog.stock", arguments: { tenant: "acme", sku: "TEA-001" } });
assert.equal(level.isError ?? false, false);
assert.equal(level.structuredContent.inStock, 42);

const invalid = await client.callTool({ name: "catalog.search", arguments: { query: 5 } }).catch((e) => e);
assert.equal(invalid.isError, true);
assert.equal(invalid.content[0].text, "Arguments do not match the tool's inputSchema.");

// A long call streams its progress before the result.
const seen = [];
const counted = await client.callTool(
  { name: "catalog.inventory", arguments: {} },
  { onprogress: (p) => seen.push(p.progress) },
);
assert.deepEqual(counted.structuredContent, { items: 4, units: 106 });
assert.deepEqual(seen, [1, 2, 3, 4]);

// Multi-round-trip input: the SDK fulfils the input_required result and retries with the
// sealed requestState.
const reserved = await client.callTool({ name: "catalog.reserve", arguments: { sku: "POT-001" } });
assert.equal(reserved.content[0].text, "Reserved 3 × Cast iron teapot.");
assert.deepEqual(asked, ["How many of Cast iron teapot shall we reserve?"]);

// catalog.restock continues as a task only for clients declaring the tasks extension; this
// SDK does not, so the order completes inline.
const restocked = await client.callTool({ name: "catalog.restock", arguments: { sku: "MUG-001", quantity: 2 } });
assert.equal(restocked.content[0].text, "Ordered 2 × Stoneware mug.");
assert.deepEqual(restocked.structuredContent, { sku: "MUG-001", ordered: 2, costCents: 1500 });

// The request context, the interceptor and the sanitizer: a client whose requests carry a
// From header and the maintenance switch.
const headed = new Client({ name: "tollgate-e2e-headers", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
await headed.connect(new StreamableHTTPClientTransport(url, {
  requestInit: { headers: { From: "ada@example.com", "X-Catalog-Maintenance": "on" } },
}));
const who = await headed.callTool({ name: "catalog.whoami", arguments: {} });
assert.match(who.content[0].text, /; from: \[email\]$/);
const closed = await headed.callTool({ name: "catalog.restock", arguments: { sku: "MUG-001", quantity: 1 } });
assert.equal(closed.isError, true);
assert.equal(closed.content[0].text, "The catalog is in maintenance; try again later.");
await headed.close();

// The prompt, its argument completion, and its rendering.
const { prompts } = await client.listPrompts();
assert.deepEqual(prompts.map((p) => p.name), ["catalog.pairing"]);
const suggested = await client.complete({
  ref: { type: "ref/prompt", name: "catalog.pairing" },
  argument: { name: "occasion", value: "b" },
});
assert.deepEqual(suggested.completion.values, ["breakfast"]);
const rendered = await client.getPrompt({ name: "catalog.pairing", arguments: { occasion: "breakfast" } });
assert.match(rendered.messages[0].content.text, /Assam breakfast tea \(TEA-001\).*breakfast/);

// Resources: the price list, catalog.search's MCP Apps view, the skill's SKILL.md, the item
// template, and reading the link catalog.get returned.
const { resources } = await client.listResources();
// The catalog's skill (the skills extension, on 2026-07-28) lists its SKILL.md after them.
assert.deepEqual(resources.map((r) => r.uri), ["catalog://price-list", "ui://catalog/search", "skill://tea-shop-assistant/SKILL.md"]);
const skillMd = await client.readResource({ uri: "skill://tea-shop-assistant/SKILL.md" });
assert.equal(skillMd.contents[0].mimeType, "text/markdown");
assert.match(skillMd.contents[0].text, /^---\nname: tea-shop-assistant\n/);
const { resourceTemplates } = await client.listResourceTemplates();
assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate), ["catalog://items/{sku}"]);
const linked = await client.readResource({ uri: get.content[1].uri });
assert.deepEqual(JSON.parse(linked.contents[0].text), { sku: "TEA-001", name: "Assam breakfast tea", priceCents: 899 });
const missing = await client.readResource({ uri: "catalog://nothing" }).catch((e) => e);
assert.equal(missing.code, -32602);
const noItem = await client.readResource({ uri: "catalog://items/NOPE-1" }).catch((e) => e);
assert.equal(noItem.code, -32602);

// The live catalog: catalog.seasonal adds catalog.gift_wrap, and a listen asking for tool list
// changes hears of it before the list shows it. Behind the cluster (TOLLGATE_E2E_CLUSTER) the
// listener is pinned to one instance (TOLLGATE_E2E_LISTEN_URL) and the change made through
// another (TOLLGATE_E2E_CHANGE_URL): the change travels through the catalog event bus, and ten
// lists in a row through the one URL (round robin) all show it. Every wait is bounded, so a
// missing notification fails, never hangs.
const cluster = Boolean(process.env.TOLLGATE_E2E_CLUSTER);
const listenUrl = new URL(process.env.TOLLGATE_E2E_LISTEN_URL ?? url);
const changeUrl = new URL(process.env.TOLLGATE_E2E_CHANGE_URL ?? url);
const within = (promise, what) => Promise.race([
  promise,
  new Promise((_, reject) => setTimeout(() => reject(new Error(`no ${what} within 10 s`)), 10000)),
]);
const toolsChanged = () => {
  let heard;
  const promise = new Promise((resolve) => { heard = resolve; });
  return { promise, heard };
};
const modernAt = async (at) => {
  const other = new Client({ name: "tollgate-e2e-live", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
  await other.connect(new StreamableHTTPClientTransport(at));
  return other;
};
// Ten lists in a row through the one URL, each with (or each without) the gift wrap.
const tenLists = async (lister, offered) => {
  for (let i = 1; i <= 10; i++) {
    const names = (await lister.listTools()).tools.map((t) => t.name);
    assert.equal(names.includes("catalog.gift_wrap"), offered, `list ${i}: ${names}`);
  }
};
const changer = cluster ? await modernAt(changeUrl) : client;
{
  const listener = cluster ? await modernAt(listenUrl) : client;
  let modernChange = toolsChanged();
  listener.setNotificationHandler("notifications/tools/list_changed", () => modernChange.heard());
  const subscription = await listener.listen({ toolsListChanged: true });
  assert.equal(subscription.honoredFilter.toolsListChanged, true);
  const season = await changer.callTool({ name: "catalog.seasonal", arguments: { enabled: true } });
  assert.equal(season.structuredContent.enabled, true);
  await within(modernChange.promise, "tools/list_changed on the listen");
  await tenLists(client, true);
  const wrapped = await client.callTool({ name: "catalog.gift_wrap", arguments: { sku: "TEA-001" } });
  assert.deepEqual(wrapped.structuredContent, { sku: "TEA-001", card: "Season's greetings", price_cents: 350 });
  modernChange = toolsChanged();
  await changer.callTool({ name: "catalog.seasonal", arguments: { enabled: false } });
  await within(modernChange.promise, "tools/list_changed on the listen");
  await tenLists(client, false);
  await subscription.close();
  if (cluster) await listener.close();
}

await client.close();
console.log(`official TypeScript client: list and call over 2026-07-28 ok (live catalog through listen${cluster ? ", changed on another instance" : ""})`);

// The same client in its default mode speaks 2025-11-25: initialize, a session, JSON responses.
const legacy = new Client({ name: "tollgate-e2e", version: "1.0.0" }, { capabilities: { elicitation: {} } });
legacy.setRequestHandler("elicitation/create", answerQuantity);
const transport = new StreamableHTTPClientTransport(url);
await legacy.connect(transport);
assert.equal(legacy.getNegotiatedProtocolVersion?.() ?? "2025-11-25", "2025-11-25");
assert.ok(transport.sessionId, "the server issued a session");
const legacyTools = (await legacy.listTools()).tools.map((t) => t.name);
// catalog.stock mirrors a header, which only 2026-07-28 can carry: it is not offered here.
assert.deepEqual(legacyTools, ["catalog.search", "catalog.get", "catalog.inventory", "catalog.reserve", "catalog.restock", "catalog.whoami", "catalog.seasonal"]);
// A server-to-client elicitation on the call's SSE stream, answered by the client's POST.
const legacyReserved = await legacy.callTool({ name: "catalog.reserve", arguments: { sku: "MUG-001" } });
assert.equal(legacyReserved.content[0].text, "Reserved 3 × Stoneware mug.");
// 2025-11-25's experimental tasks, through the official Tasks package (@modelcontextprotocol/
// ext-tasks) on this session: catalog.restock offers them, the order runs as a task the package
// polls, the approval the work asks for arrives on the session's stream naming its task and is
// answered by the package's input handler, and the result comes from tasks/result.
// (A client of its own: the package answers through the client's fallback handler, which a
// handler set for elicitation/create, as on `legacy`, would take precedence over.)
const tasking = new Client({ name: "tollgate-e2e-tasks", version: "1.0.0" }, { capabilities: { elicitation: {} } });
await tasking.connect(new StreamableHTTPClientTransport(url));
const restockTool = (await tasking.listTools()).tools.find((t) => t.name === "catalog.restock");
assert.deepEqual(restockTool.execution, { taskSupport: "optional" });
const approvals = [];
const taskSession = createTaskSessionFromClient(tasking, {
  endpointId: "tollgate-catalog-e2e",
  onInputRequest: async (request, context) => {
    approvals.push([request.kind, context.scope, request.params.message]);
    return { action: "accept", content: { approve: true } };
  },
});
const execution = await taskSession.callTool("catalog.restock", { sku: "TEA-001", quantity: 2 }, { task: { preference: "require" }, requestTimeoutMs: 20000 });
const statuses = [];
const { outcome } = await execution.settle({ onEvent: (e) => statuses.push(e.type === "task" ? e.task.status : e.outcome.status) });
const ordered = resultFromTaskOutcome(outcome);
assert.equal(ordered.content[0].text, "Ordered 2 × Assam breakfast tea.");
assert.deepEqual(ordered.structuredContent, { sku: "TEA-001", ordered: 2, costCents: 1078 });
assert.equal(ordered._meta["io.modelcontextprotocol/related-task"].taskId, outcome.task.taskId);
assert.deepEqual(approvals, [["elicitation", "task", "Approve a purchase order of 2 × Assam breakfast tea for $10.78?"]]);
assert.equal(statuses.at(-1), "completed");
await taskSession.close();
await tasking.close();
const legacyPrompt = await legacy.getPrompt({ name: "catalog.pairing", arguments: { occasion: "evening" } });
assert.equal(legacyPrompt.description, "Tea pairing for an occasion");
const prices = await legacy.readResource({ uri: "catalog://price-list" });
assert.match(prices.contents[0].text, /^sku,name,price_cents\nTEA-001,/);
const legacyNotFound = await legacy.readResource({ uri: "catalog://nothing" }).catch((e) => e);
assert.equal(legacyNotFound.code, -32002);
const legacyMissing = await legacy.getPrompt({ name: "catalog.pairing", arguments: {} }).catch((e) => e);
assert.equal(legacyMissing.code, -32602);
const legacySearch = await legacy.callTool({ name: "catalog.search", arguments: { query: "mug" } });
assert.deepEqual(legacySearch.structuredContent.items.map((i) => i.sku), ["MUG-001"]);
const legacyInvalid = await legacy.callTool({ name: "catalog.get", arguments: {} });
assert.equal(legacyInvalid.isError, true);
assert.equal(legacyInvalid.content[0].text, "Arguments do not match the tool's inputSchema.");
// catalog.inventory frees its connection after the first item on 2025-11-25: the client
// reconnects with Last-Event-ID (after the stream's retry delay) and receives the rest (behind a
// load balancer, possibly from another instance, which relays the stream from the shared store).
const resumedProgress = [];
const resumed = await legacy.callTool(
  { name: "catalog.inventory", arguments: { tenant: "acme" } },
  { onprogress: (p) => resumedProgress.push(p.progress), timeout: 20000 },
);
assert.deepEqual(resumed.structuredContent, { items: 4, units: 69 });
assert.equal(resumedProgress.at(-1), 4);
// The live catalog on 2025-11-25: list_changed arrives on the session's standalone GET stream
// (in the cluster, a session on the listening instance, the change made through another).
{
  const listener = cluster
    ? new Client({ name: "tollgate-e2e-live", version: "1.0.0" })
    : legacy;
  let legacyChange = toolsChanged();
  listener.setNotificationHandler("notifications/tools/list_changed", () => legacyChange.heard());
  const listening = cluster ? new StreamableHTTPClientTransport(listenUrl) : transport;
  if (cluster) await listener.connect(listening);
  const legacyChanger = cluster ? changer : legacy;
  await legacyChanger.callTool({ name: "catalog.seasonal", arguments: { enabled: true } });
  await within(legacyChange.promise, "tools/list_changed on the session's stream");
  await tenLists(legacy, true);
  const legacyWrapped = await legacy.callTool({ name: "catalog.gift_wrap", arguments: { sku: "MUG-001", card: "Enjoy" } });
  assert.equal(legacyWrapped.structuredContent.card, "Enjoy");
  legacyChange = toolsChanged();
  await legacyChanger.callTool({ name: "catalog.seasonal", arguments: { enabled: false } });
  await within(legacyChange.promise, "tools/list_changed on the session's stream");
  await tenLists(legacy, false);
  if (cluster) {
    await listening.terminateSession();
    await listener.close();
    await changer.close();
  }
}
await transport.terminateSession();
await legacy.close();
console.log("official TypeScript client: initialize, list and call over 2025-11-25 ok");

// Over stdio, as a desktop client starts it: the same tools through stdin and stdout.
if (process.argv[3]) {
  const stdio = new Client(
    { name: "tollgate-e2e", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await stdio.connect(new StdioClientTransport({ command: process.argv[3], args: ["--stdio"] }));
  const names = (await stdio.listTools()).tools.map((t) => t.name);
  assert.deepEqual(names, ["catalog.search", "catalog.get", "catalog.stock", "catalog.inventory", "catalog.reserve", "catalog.restock", "catalog.whoami", "catalog.seasonal"]);
  const found = await stdio.callTool({ name: "catalog.stock", arguments: { tenant: "globex", sku: "MUG-001" } });
  assert.equal(found.structuredContent.inStock, 25);
  await stdio.close();
  const legacyStdio = new Client({ name: "tollgate-e2e", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  const askedOverStdio = [];
  legacyStdio.setRequestHandler("elicitation/create", async (request) => {
    askedOverStdio.push(request.params.message);
    return { action: "accept", content: { quantity: 2 } };
  });
  await legacyStdio.connect(new StdioClientTransport({ command: process.argv[3], args: ["--stdio"] }));
  const got = await legacyStdio.callTool({ name: "catalog.get", arguments: { sku: "POT-001" } });
  assert.equal(got.content[0].type, "text");
  // A server-to-client elicitation as a line on stdout, answered by the client's line on stdin.
  const reservedOverStdio = await legacyStdio.callTool({ name: "catalog.reserve", arguments: { sku: "MUG-001" } });
  assert.equal(reservedOverStdio.content[0].text, "Reserved 2 × Stoneware mug.");
  assert.equal(askedOverStdio.length, 1);
  await legacyStdio.close();
  console.log("official TypeScript client: 2026-07-28 and 2025-11-25 over stdio ok (an elicitation answered in lines)");
}
