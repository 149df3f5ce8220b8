// The host page's script: the official MCP TypeScript client and AppBridge from
// @modelcontextprotocol/ext-apps. It declares the io.modelcontextprotocol/ui extension,
// finds the view catalog.search names (`_meta.ui.resourceUri`), calls the tool, reads the view
// (`text/html;profile=mcp-app`, its CSP and permissions in the content's `_meta.ui`), loads the
// sandbox proxy on its own origin with that CSP, hands the proxy the view's HTML, and pushes the
// tool's input and result into the view. The view's own tool calls (catalog.reserve) go through
// the bridge to this client; the server's question comes back as elicitation and is shown in
// the page's form.
// Query: ?server=MCP_URL&sandbox=SANDBOX_URL[&revision=2025-11-25]
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
} from "@modelcontextprotocol/ext-apps/app-bridge";

const query = new URLSearchParams(location.search);
const server = new URL(query.get("server") ?? "http://127.0.0.1:8080/mcp");
const sandbox = new URL(query.get("sandbox") ?? "http://127.0.0.1:8081/sandbox.html");
const revision = query.get("revision") ?? "2026-07-28";
const info = { name: "tollgate-apps-host", version: "1.0.0" };
const $ = (id) => document.getElementById(id);
$("server").textContent = server.href;

/** Shows the server's question in the page's form; resolves with the user's answer. */
function ask(request) {
  const form = $("ask");
  $("question").textContent = request.params.message;
  form.hidden = false;
  return new Promise((resolve) => {
    const done = (answer) => {
      form.hidden = true;
      form.onsubmit = null;
      $("decline").onclick = null;
      resolve(answer);
    };
    form.onsubmit = (event) => {
      event.preventDefault();
      done({ action: "accept", content: { quantity: Number($("quantity").value) } });
    };
    $("decline").onclick = () => done({ action: "decline" });
  });
}

/** Loads the sandbox proxy with the view's CSP; resolves once it says it is ready. */
function loadSandbox(iframe, csp) {
  const url = new URL(sandbox);
  url.searchParams.set("host", location.origin);
  if (csp) url.searchParams.set("csp", JSON.stringify(csp));
  iframe.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
  return new Promise((resolve) => {
    const ready = (event) => {
      if (event.source === iframe.contentWindow && event.origin === url.origin &&
          event.data?.method === "ui/notifications/sandbox-proxy-ready") {
        window.removeEventListener("message", ready);
        resolve();
      }
    };
    window.addEventListener("message", ready);
    iframe.src = url.href;
  });
}

async function main() {
  const options = {
    capabilities: {
      elicitation: {},
      extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [RESOURCE_MIME_TYPE] } },
    },
  };
  if (revision === "2026-07-28") options.versionNegotiation = { mode: { pin: revision } };
  const client = new Client(info, options);
  client.setRequestHandler("elicitation/create", ask);
  await client.connect(new StreamableHTTPClientTransport(server));
  $("revision").textContent = client.getNegotiatedProtocolVersion?.() ?? client.protocolVersion ?? "?";

  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === "catalog.search");
  const uri = tool && getToolUiResourceUri(tool);
  if (!uri) throw new Error("catalog.search names no view");
  $("uri").textContent = uri;

  const input = { query: "tea" };
  const result = client.callTool({ name: "catalog.search", arguments: input });
  const { contents } = await client.readResource({ uri });
  const [view] = contents;
  if (contents.length !== 1 || view.mimeType !== RESOURCE_MIME_TYPE || typeof view.text !== "string") {
    throw new Error(`not an MCP Apps view: ${view?.mimeType}`);
  }
  const { csp, permissions } = view._meta?.ui ?? {};

  const iframe = $("view");
  await loadSandbox(iframe, csp);
  const bridge = new AppBridge(client, info, { openLinks: {}, serverTools: {}, logging: {} });
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  await bridge.sendSandboxResourceReady({ html: view.text, csp, permissions });
  await initialized;
  await bridge.sendToolInput({ arguments: input });
  const done = await result;
  $("result").textContent = JSON.stringify(done.structuredContent ?? null);
  await bridge.sendToolResult(done);
  $("status").textContent = "rendered";
}

main().catch((error) => {
  $("status").textContent = `error: ${error?.message ?? error}`;
  $("status").className = "error";
});
