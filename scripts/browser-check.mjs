// Drives headless Chromium (Debian's, through playwright-core) over the catalog's web page:
// from the origin the demo's CORS policy grants, both revisions' calls succeed (read from the
// DOM); from another origin, the browser blocks them (CORS) after the server refuses the
// preflight with 403. Screenshots of both go to the output directory.
// Usage: node check.mjs SERVER_URL PAGE_PORT OUT_DIR CHROMIUM
import assert from "node:assert/strict";
import http from "node:http";
import { join } from "node:path";
import { chromium } from "playwright-core";

const [server, port, out, executablePath] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath,
  args: [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});

async function visit(origin, shot) {
  const page = await browser.newPage();
  const console = [];
  page.on("console", (m) => console.push(m.text()));
  // Which calls carried the mirrored header the page sends itself.
  const mirrored = [];
  page.on("request", (r) => {
    if (r.url() === server && r.method() === "POST" && r.headers()["mcp-param-tenant"] !== undefined) {
      mirrored.push(JSON.parse(r.postData() ?? "{}").params?.name ?? "-");
    }
  });
  await page.goto(`${origin}/index.html?server=${encodeURIComponent(server)}`);
  await page.locator("#done").waitFor({ state: "visible", timeout: 60_000 });
  const read = async (id) => ({
    status: await page.locator(`#${id} .status`).textContent(),
    results: await page.locator(`#${id} .results li`).allTextContents(),
  });
  const result = { r2026: await read("r2026"), r2025: await read("r2025"), console, mirrored };
  await page.screenshot({ path: join(out, shot), fullPage: true });
  await page.close();
  return result;
}

try {
const tools = "tools: catalog.search, catalog.get, catalog.stock, catalog.inventory, catalog.reserve, catalog.restock, catalog.whoami, catalog.seasonal";
const allowed = await visit(`http://localhost:${port}`, "browser-allowed.png");
assert.equal(allowed.r2026.status, "ok", JSON.stringify(allowed));
// The header goes with the mirrored tool's call (and the initializing requests of the client made
// for it), never with the other calls.
assert.ok(allowed.mirrored.includes("catalog.stock"), JSON.stringify(allowed.mirrored));
assert.ok(!allowed.mirrored.includes("catalog.search"), JSON.stringify(allowed.mirrored));
assert.deepEqual(allowed.r2026.results, ["revision: 2026-07-28", tools, "search: TEA-001, POT-001", "stock: 42"]);
assert.equal(allowed.r2025.status, "ok", JSON.stringify(allowed));
assert.deepEqual(allowed.r2025.results, [
  "revision: 2025-11-25",
  tools.replace(", catalog.stock", ""),
  "search: TEA-001, POT-001",
]);

// The same page from an origin the policy does not grant: the preflight is refused.
const refused = await visit(`http://127.0.0.1:${port}`, "browser-refused.png");
assert.match(refused.r2026.status, /^error:/, JSON.stringify(refused));
assert.match(refused.r2025.status, /^error:/, JSON.stringify(refused));
// (Chromium reports the CORS failure on the page's console; its wording is Chromium's.)
if (!refused.console.some((line) => /CORS/.test(line))) console.warn("no CORS message on the console");
// The server's answer to the preflight the refused page sends: 403, with no grant.
const preflight = await new Promise((resolve, reject) => {
  const request = http.request(server, {
    method: "OPTIONS",
    headers: {
      Origin: `http://127.0.0.1:${port}`,
      "Access-Control-Request-Method": "POST",
      "Access-Control-Request-Headers": "content-type, mcp-method, mcp-protocol-version",
    },
  }, (response) => { response.resume(); resolve(response); });
  request.on("error", reject);
  request.end();
});
assert.equal(preflight.statusCode, 403);
assert.equal(preflight.headers["access-control-allow-origin"], undefined);
} finally {
  await browser.close();
}
console.log(`browser: the catalog page works from its granted origin on 2026-07-28 and 2025-11-25, and is refused from another (screenshots in ${out})`);
