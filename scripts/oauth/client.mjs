// The official TypeScript MCP client's OAuth flow against the protected catalog demo, headless:
// the first request gets a 401, the client discovers the protected resource metadata and the
// authorization server, registers itself (RFC 7591), runs the authorization code flow with
// PKCE for `catalog:read` (this script plays the browser, following redirects with its own
// cookie jar), then lists and calls tools. `catalog.restock` needs `catalog:write`: its 403
// `insufficient_scope` makes the client step up and retry. Finally it checks the refusals a
// client without a usable token gets. With `gateway`, the same flow against `tollgate gateway`
// protecting the demo it fronts over stdio (its tools served as `cat_*`): list and call with
// the gateway's token (never passed upstream), then the refusals.
// Usage: node client.mjs http://127.0.0.1:PORT/mcp [gateway]
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";

const url = new URL(process.argv[2]);
const gateway = process.argv[3] === "gateway";
const served = (name) => (gateway ? `cat_${name}` : name);
const redirect = "http://127.0.0.1:9/callback";
const store = {};
let callback;
const jar = new Map();

// The user agent: follow the authorization server's redirects until it sends us back.
async function browse(start) {
  let at = new URL(start);
  for (let hop = 0; hop < 20; hop++) {
    if (at.href.startsWith(redirect)) return at.searchParams;
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
    const response = await fetch(at, { redirect: "manual", headers: cookie ? { cookie } : {} });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const [name, ...value] = pair.split("=");
      jar.set(name.trim(), value.join("="));
    }
    const location = response.headers.get("location");
    assert.ok(location, `the authorization server answered ${response.status} without a redirect`);
    at = new URL(location, at);
  }
  throw new Error("too many redirects");
}

const provider = {
  get redirectUrl() { return redirect; },
  get clientMetadata() {
    return {
      client_name: "tollgate-oauth-e2e",
      redirect_uris: [redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  },
  clientInformation: () => store.client,
  saveClientInformation: (client) => { store.client = client; },
  tokens: () => store.tokens,
  saveTokens: (tokens) => { store.tokens = tokens; },
  saveCodeVerifier: (verifier) => { store.verifier = verifier; },
  codeVerifier: () => store.verifier,
  saveDiscoveryState: (state) => { store.discovery = state; },
  discoveryState: () => store.discovery,
  redirectToAuthorization: async (authorization) => {
    store.asked = authorization.searchParams.get("scope");
    callback = await browse(authorization);
  },
};

// Runs `step`; when the client had to send the user to authorize, finishes and runs it again.
async function authorized(transport, step) {
  try {
    return await step();
  } catch (error) {
    if (!(error instanceof UnauthorizedError) || !callback) throw error;
    const params = callback;
    callback = undefined;
    await transport.finishAuth(params);
    return await step();
  }
}

const options = { versionNegotiation: { mode: { pin: "2026-07-28" } } };
let client = new Client({ name: "tollgate-oauth-e2e", version: "1.0.0" }, options);
let transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
try {
  await client.connect(transport);
} catch (error) {
  if (!(error instanceof UnauthorizedError) || !callback) throw error;
  const params = callback;
  callback = undefined;
  await transport.finishAuth(params);
  client = new Client({ name: "tollgate-oauth-e2e", version: "1.0.0" }, options);
  transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await client.connect(transport);
}
assert.ok(store.client?.client_id, "the client registered itself");
// The 401's scope (the client may add offline_access for a refresh token), not catalog:write.
const asked = store.asked.split(" ");
assert.ok(asked.includes("catalog:read") && !asked.includes("catalog:write"), store.asked);

const { tools } = await authorized(transport, () => client.listTools());
assert.ok(tools.some((t) => t.name === served("catalog.restock")), "the catalog lists every tool");
const found = await authorized(transport, () =>
  client.callTool({ name: served("catalog.search"), arguments: { query: "tea", limit: 5 } }));
assert.deepEqual(found.structuredContent.items.map((i) => i.sku), ["TEA-001", "POT-001"]);
if (gateway) {
  await client.close();
  console.log("OAuth through the gateway: discovery, registration, PKCE code flow at the gateway as a protected resource, list and call of the stdio server behind it ok");
  await refusals();
  process.exit(0);
}
const who = await authorized(transport, () => client.callTool({ name: "catalog.whoami", arguments: {} }));
assert.match(who.content[0].text, /user: demo-user \(catalog:read\)$/);
console.log("OAuth: discovery, registration, PKCE code flow, list and call as demo-user ok");

// Restocking needs catalog:write: a 403 insufficient_scope, a step-up authorization, a retry.
const restocked = await authorized(transport, () =>
  client.callTool({ name: "catalog.restock", arguments: { sku: "TEA-001", quantity: 1 } }));
assert.equal(restocked.isError ?? false, false, JSON.stringify(restocked));
assert.match(store.tokens.scope, /catalog:write/);
const after = await authorized(transport, () => client.callTool({ name: "catalog.whoami", arguments: {} }));
assert.match(after.content[0].text, /user: demo-user \(catalog:read catalog:write\)$/);
console.log("OAuth: step-up to catalog:write on a 403 insufficient_scope ok");
await client.close();

// The same token on 2025-11-25: initialize and a session, the bearer token on every request.
const legacy = new Client({ name: "tollgate-oauth-e2e", version: "1.0.0" });
const legacyTransport = new StreamableHTTPClientTransport(url, { authProvider: provider });
await legacy.connect(legacyTransport);
assert.equal(legacy.getNegotiatedProtocolVersion?.() ?? "2025-11-25", "2025-11-25");
assert.ok(legacyTransport.sessionId, "the server issued a session");
const legacyWho = await legacy.callTool({ name: "catalog.whoami", arguments: {} });
assert.match(legacyWho.content[0].text, /user: demo-user \(catalog:read catalog:write\)$/);
await legacy.close();
console.log("OAuth: a 2025-11-25 session with the same token ok");

await refusals();

// Without a usable token: the fixed refusals, none echoing what was sent.
async function refusals() {
  const raw = (authorization) => fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/list",
      ...(authorization ? { authorization } : {}),
    },
    body: JSON.stringify({
      jsonrpc: "2.0", id: 1, method: "tools/list",
      params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } },
    }),
  });
  const none = await raw();
  assert.equal(none.status, 401);
  assert.match(none.headers.get("www-authenticate"), /^Bearer resource_metadata="[^"]+", scope="catalog:read"$/);
  const forged = store.tokens.access_token.slice(0, -4) + "AAAA";
  const refused = await raw(`Bearer ${forged}`);
  assert.equal(refused.status, 401);
  assert.match(refused.headers.get("www-authenticate"), /error="invalid_token"/);
  assert.ok(!(await refused.text()).includes(forged.split(".")[1]));
  console.log("OAuth: refusals without a usable token ok");
}
