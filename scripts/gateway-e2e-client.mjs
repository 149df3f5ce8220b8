// The gateway end to end with the official TypeScript MCP client (@modelcontextprotocol/client):
// connects to `tollgate gateway` in front of @modelcontextprotocol/server-everything, on
// 2026-07-28 and on 2025-11-25, lists the tools it serves (prefixed `ev_`) and calls some
// through it: a good call relayed, a bad one refused by the gateway before forwarding, a
// structured result held to its (non-Profile-1) output schema, an image relayed; then a prompt
// and resources (static and from a template) through their prefixed names and URIs.
// Usage: node gateway-client.mjs http://127.0.0.1:PORT/mcp
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const url = new URL(process.argv[2]);
for (const revision of ["2026-07-28", "2025-11-25"]) {
  // Pinned to 2026-07-28; the client's default mode speaks 2025-11-25 (initialize, a session).
  const options = revision === "2026-07-28" ? { versionNegotiation: { mode: { pin: revision } } } : {};
  const capabilities = { sampling: {}, elicitation: {} };
  const client = new Client({ name: "tollgate-gateway-e2e", version: "1.0.0" }, { ...options, capabilities });
  const asked = [];
  client.setRequestHandler("sampling/createMessage", async (request) => {
    asked.push(request.params.messages[0].content.text);
    return { role: "assistant", content: { type: "text", text: "sampled by the caller" }, model: "e2e" };
  });
  client.setRequestHandler("elicitation/create", async (request) => {
    asked.push(request.params.message);
    return { action: "accept", content: { name: "Ada", check: true, integer: 7 } };
  });
  await client.connect(new StreamableHTTPClientTransport(url));
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const expected of ["ev_echo", "ev_get-sum", "ev_get-structured-content", "ev_get-tiny-image"]) {
    assert.ok(names.includes(expected), `${revision}: ${expected} in ${names}`);
  }
  assert.ok(names.every((n) => n.startsWith("ev_")), `${revision}: every name prefixed`);

  const echo = await client.callTool({ name: "ev_echo", arguments: { message: "through the gateway" } });
  assert.equal(echo.content[0].text, "Echo: through the gateway");

  const sum = await client.callTool({ name: "ev_get-sum", arguments: { a: 2, b: 3 } });
  assert.match(sum.content[0].text, /5/);

  // Refused by the gateway's own validation: never forwarded.
  const bad = await client.callTool({ name: "ev_get-sum", arguments: { a: "two", b: 3 } }).catch((e) => e);
  assert.equal(bad.isError, true, `${revision}: a bad call is refused`);

  const weather = await client.callTool({ name: "ev_get-structured-content", arguments: { location: "New York" } });
  assert.equal(typeof weather.structuredContent.temperature, "number");

  const image = await client.callTool({ name: "ev_get-tiny-image", arguments: {} });
  assert.ok(image.content.some((c) => c.type === "image" && c.mimeType === "image/png"));

  // Prompts and resources: names prefixed, URIs as `ev+uri`, mapped back for the upstream.
  const { prompts } = await client.listPrompts();
  assert.ok(prompts.some((p) => p.name === "ev_args-prompt"), `${revision}: prompts`);
  const prompt = await client.getPrompt({ name: "ev_args-prompt", arguments: { city: "Paris" } });
  assert.match(prompt.messages[0].content.text, /Paris/);
  const { resources } = await client.listResources();
  const features = "ev+demo://resource/static/document/features.md";
  assert.ok(resources.some((r) => r.uri === features), `${revision}: resources`);
  const read = await client.readResource({ uri: features });
  assert.equal(read.contents[0].uri, features);
  assert.match(read.contents[0].text, /Features/);
  const dynamic = await client.readResource({ uri: "ev+demo://resource/dynamic/text/3" });
  assert.match(dynamic.contents[0].text, /Resource 3/);
  // The stdio upstream's requests during a call (sampling, elicitation), relayed to a 2025
  // caller on its call's stream: nothing on the upstream's lines names the call, and the
  // gateway's `sole_call_requests` gives them to the only call outstanding.
  if (revision === "2025-11-25") {
    const sampled = await client.callTool({ name: "ev_trigger-sampling-request", arguments: { prompt: "hello" } });
    assert.match(sampled.content[0].text, /sampled by the caller/, JSON.stringify(sampled));
    const elicited = await client.callTool({ name: "ev_trigger-elicitation-request", arguments: {} });
    assert.match(elicited.content.map((c) => c.text).join("\n"), /Ada/, JSON.stringify(elicited));
    assert.equal(asked.length, 2, `${asked}`);
  }
  await client.close();
  console.log(`gateway ${revision}: list and calls ok through the gateway${revision === "2025-11-25" ? " (sampling and elicitation relayed from stdio)" : ""}`);
}
