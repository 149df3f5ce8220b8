// Drives headless Chromium (Debian's, through playwright-core) over the catalog's web page:
// from the origin the demo's CORS policy grants, both revisions' calls succeed (read from the
// DOM); from another origin, the browser blocks them (CORS) after the server refuses the
// preflight with 403. Screenshots of both go to the output directory.
// Usage: node check.mjs SERVER_URL PAGE_PORT OUT_DIR
import assert from "node:assert/strict";
import http from "node:http";
import { join } from "node:path";
import { chromium } from "playwright-core";

const [server, port, out] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});

async function visit(origin, shot) {
  const page = await browser.newPage();
  const console = [];
  page.on("console", (m) => console.push(m.text()));
  const statuses = [];
  page.on("response", (r) => { if (r.url() === server) statuses.push(`${r.request().method()} ${r.status()}`); });
  await page.goto(`${origin}/index.html?server=${encodeURIComponent(server)}`);
  await page.waitForSelector("#done", { state: "attached", timeout: 60_000 });
  await page.locator("#done").waitFor({ state: "visible", timeout: 60_000 });
  const read = async (id) => ({
    status: await page.locator(`#${id} .status`).textContent(),
    results: await page.locator(`#${id} .results li`).allTextContents(),
  });
  const result = { r2026: await read("r2026"), r2025: await read("r2025"), console, statuses };
  await page.screenshot({ path: join(out, shot), fullPage: true });
  await page.close();
  return result;
}

const tools = "tools: catalog.search, catalog.get, catalog.stock, catalog.inventory, catalog.reserve, catalog.restock, catalog.whoami";
const allowed = await visit(`http://localhost:${port}`, "browser-allowed.png");
assert.equal(allowed.r2026.status, "ok", JSON.stringify(allowed));
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
assert.ok(refused.console.some((line) => /blocked by CORS policy/.test(line)), JSON.stringify(refused.console));
// What the browser met: the server's answer to that preflight is 403, with no grant.
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
await browser.close();
console.log(`browser: the catalog page works from its granted origin on 2026-07-28 and 2025-11-25, and is refused from another (screenshots in ${out})`);
