// The web side of scripts/apps-e2e, four local origins: the host page (SITE_DIR), the sandbox
// proxy on a second origin (sandbox.html, with the CSP built from the view's declared `csp`
// passed in `?csp=`), and two probe origins the view may try to reach: one its CSP grants, one
// it does not. Both probes answer any origin (CORS) and count their hits, so only the CSP can
// stop the refused one; `GET /hits` on the host origin reports the counts.
// Prints one JSON line with the ports, then serves until killed.
// Usage: node serve.mjs SITE_DIR
import { readFile } from "node:fs/promises";
import http from "node:http";
import { extname, join } from "node:path";

const site = process.argv[2];
const hits = { granted: 0, refused: 0 };
const types = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8" };

/** The view's CSP (the `csp` object of its resource's `_meta.ui`) as a header value; a
 * host's restrictive defaults where the view declares nothing. Entries with characters that
 * could end a source or a directive are dropped. */
function policy(csp) {
  const list = (key) =>
    (Array.isArray(csp?.[key]) ? csp[key] : [])
      .filter((d) => typeof d === "string" && /^[A-Za-z0-9*.:/[\]_-]+$/.test(d))
      .join(" ");
  const resources = list("resourceDomains");
  const frames = list("frameDomains");
  const bases = list("baseUriDomains");
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${resources}`.trim(),
    `style-src 'self' 'unsafe-inline' ${resources}`.trim(),
    `img-src 'self' data: ${resources}`.trim(),
    `font-src 'self' data: ${resources}`.trim(),
    `media-src 'self' data: ${resources}`.trim(),
    `connect-src 'self' ${list("connectDomains")}`.trim(),
    frames ? `frame-src ${frames}` : "frame-src 'none'",
    "object-src 'none'",
    bases ? `base-uri ${bases}` : "base-uri 'none'",
  ].join("; ");
}

function listen(handler) {
  return new Promise((resolve) => {
    const server = http.createServer((request, response) => {
      handler(new URL(request.url, "http://local"), response).catch((error) => {
        response.writeHead(500).end(String(error));
      });
    });
    server.listen(0, "127.0.0.1", () => resolve(server.address().port));
  });
}

async function file(response, name, headers = {}) {
  const body = await readFile(join(site, name));
  response.writeHead(200, { "content-type": types[extname(name)] ?? "application/octet-stream", ...headers });
  response.end(body);
}

const host = await listen(async (url, response) => {
  if (url.pathname === "/hits") {
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(hits));
  } else if (url.pathname === "/" || url.pathname === "/host.html") {
    await file(response, "host.html");
  } else if (url.pathname === "/host.js") {
    await file(response, "host.js");
  } else {
    response.writeHead(404).end();
  }
});
const sandbox = await listen(async (url, response) => {
  if (url.pathname !== "/sandbox.html") return void response.writeHead(404).end();
  let csp;
  try {
    csp = JSON.parse(url.searchParams.get("csp") ?? "null");
  } catch {
    csp = null;
  }
  await file(response, "sandbox.html", { "content-security-policy": policy(csp), "cache-control": "no-store" });
});
const probe = (name) => listen(async (url, response) => {
  if (url.pathname !== "/probe") return void response.writeHead(404).end();
  hits[name] += 1;
  response.writeHead(200, { "content-type": "text/plain", "access-control-allow-origin": "*" }).end(`${name}: reachable`);
});
const granted = await probe("granted");
const refused = await probe("refused");
console.log(JSON.stringify({ host, sandbox, granted, refused }));
