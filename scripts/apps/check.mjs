// Drives headless Chromium (Debian's, through playwright-core) over the MCP Apps host page, once
// per revision: the view of catalog.search renders in the sandboxed iframe with the rows the tool
// returned; a click on a row's Reserve button in the view calls catalog.reserve through the host,
// the host's form answers the server's question, and the reservation arrives at the demo (its
// log); from inside the view, a fetch to the origin its CSP grants succeeds and one to another
// origin is refused by the browser (a CSP violation, and the probe never hit). Screenshots go to
// the output directory. First, outside the browser: the official client sees catalog.search's
// view metadata only when it declares the extension.
// Usage: node check.mjs HOST_ORIGIN SANDBOX_ORIGIN SERVER_URL GRANTED_ORIGIN REFUSED_ORIGIN DEMO_LOG OUT_DIR CHROMIUM
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { chromium } from "playwright-core";

const [hostOrigin, sandboxOrigin, server, granted, refused, demoLog, out, executablePath] = process.argv.slice(2);
/** catalog.search's `_meta.ui` as the official client lists it, with or without the extension. */
async function searchUi(revision, extension) {
  const capabilities = extension
    ? { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } }
    : {};
  const options = { capabilities };
  if (revision === "2026-07-28") options.versionNegotiation = { mode: { pin: revision } };
  const client = new Client({ name: "tollgate-apps-check", version: "1.0.0" }, options);
  await client.connect(new StreamableHTTPClientTransport(new URL(server)));
  const { tools } = await client.listTools();
  await client.close();
  return tools.find((t) => t.name === "catalog.search")?._meta?.ui;
}
for (const revision of ["2026-07-28", "2025-11-25"]) {
  assert.deepEqual(await searchUi(revision, true), { resourceUri: "ui://catalog/search", visibility: ["model", "app"] });
  assert.equal(await searchUi(revision, false), undefined);
}

const browser = await chromium.launch({
  executablePath,
  args: [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});

const hits = async () => (await fetch(`${hostOrigin}/hits`)).json();

/** Waits (bounded by count, not by a clock) until `probe` returns a truthy value. */
async function eventually(probe, what) {
  for (let i = 0; i < 200; i += 1) {
    const value = await probe();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`never happened: ${what}`);
}

/** From inside the view: fetches `origin`/probe; reports the answer or the refusal and any CSP
 * violation the browser reported for it. */
function probeFrom(frame, origin) {
  return frame.evaluate(async (target) => {
    const violations = [];
    const seen = (e) => violations.push(`${e.violatedDirective} ${e.blockedURI}`);
    document.addEventListener("securitypolicyviolation", seen);
    try {
      const response = await fetch(`${target}/probe`);
      return { ok: response.ok, text: await response.text(), violations };
    } catch (error) {
      // The violation event may follow the rejection: wait for it a bounded number of turns.
      for (let i = 0; i < 100 && violations.length === 0; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return { ok: false, error: String(error), violations };
    } finally {
      document.removeEventListener("securitypolicyviolation", seen);
    }
  }, origin);
}

async function visit(revision, sku, name, quantity) {
  const page = await browser.newPage();
  const console = [];
  page.on("console", (m) => console.push(m.text()));
  const query = new URLSearchParams({ server, sandbox: `${sandboxOrigin}/sandbox.html`, revision });
  await page.goto(`${hostOrigin}/host.html?${query}`);
  await page.locator("#status", { hasText: /rendered|error/ }).waitFor({ timeout: 60_000 });
  const status = await page.locator("#status").textContent();
  assert.equal(status, "rendered", JSON.stringify({ status, console }));
  assert.equal(await page.locator("#revision").textContent(), revision);
  assert.equal(await page.locator("#uri").textContent(), "ui://catalog/search");
  const returned = JSON.parse(await page.locator("#result").textContent());

  // The view, two frames down (host page → sandbox proxy on its origin → view).
  const view = page.frameLocator("#view").frameLocator("iframe");
  const rows = view.locator("#items tbody tr");
  await rows.first().waitFor({ timeout: 30_000 });
  const shown = await rows.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td.sku, td.name, td.price")].map((td) => td.textContent)));
  const expected = returned.items.map((i) => [i.sku, i.name, `$${Math.floor(i.price_cents / 100)}.${String(i.price_cents % 100).padStart(2, "0")}`]);
  assert.deepEqual(shown, expected);
  assert.deepEqual(shown.map(([s]) => s), ["TEA-001", "POT-001"]);
  await page.screenshot({ path: join(out, `apps-${revision}-table.png`), fullPage: true });

  // A reservation from inside the view: the host asks the user (the server's question), the
  // check answers, and the demo logs the reservation.
  await view.locator(`tr[data-sku="${sku}"] button`).click();
  await page.locator("#ask").waitFor({ state: "visible", timeout: 30_000 });
  assert.equal(await page.locator("#question").textContent(), `How many of ${name} shall we reserve?`);
  await page.locator("#quantity").fill(String(quantity));
  await page.screenshot({ path: join(out, `apps-${revision}-asked.png`), fullPage: true });
  await page.locator("#accept").click();
  await view.locator("#status", { hasText: "Reserved" }).waitFor({ timeout: 30_000 });
  assert.equal(await view.locator("#status").textContent(), `Reserved ${quantity} × ${name}.`);
  const line = `catalog: reserved ${quantity} × ${sku}`;
  await eventually(async () => (await readFile(demoLog, "utf8")).includes(line), `"${line}" in the demo's log`);
  await page.screenshot({ path: join(out, `apps-${revision}-reserved.png`), fullPage: true });

  // The view's CSP, enforced by the browser: the granted origin answers, the other is refused
  // before any request leaves (its probe is never hit).
  const frame = page.frames().find((f) => f.parentFrame()?.parentFrame() === page.mainFrame());
  assert.ok(frame, "the view's frame");
  assert.equal(new URL(frame.parentFrame().url()).origin, sandboxOrigin);
  const before = await hits();
  const reached = await probeFrom(frame, granted);
  assert.deepEqual(reached, { ok: true, text: "granted: reachable", violations: [] });
  const blocked = await probeFrom(frame, refused);
  assert.equal(blocked.ok, false, JSON.stringify(blocked));
  assert.match(blocked.error, /TypeError/);
  assert.deepEqual(blocked.violations, [`connect-src ${refused}/probe`], JSON.stringify(blocked));
  const after = await hits();
  assert.deepEqual(after, { granted: before.granted + 1, refused: 0 });
  await page.close();
}

try {
  await visit("2026-07-28", "TEA-001", "Assam breakfast tea", 2);
  await visit("2025-11-25", "POT-001", "Cast iron teapot", 3);
} finally {
  await browser.close();
}
console.log(`apps: the catalog.search view rendered by an AppBridge host (sandbox proxy on ${sandboxOrigin}) on 2026-07-28 and 2025-11-25, reservations from the view reached the demo, and the view's CSP let it reach ${granted} and not ${refused} (screenshots in ${out})`);
