// The script of catalog.search's view: an MCP Apps `App` talking to its host over postMessage.
// The host pushes the tool's result (`ui/notifications/tool-result`); the view draws one row per
// item of its structured content (`items`: sku, name, price_cents) and, when a row's button is
// clicked, asks the host to call `catalog.reserve` with that SKU (the host forwards it to the
// server; the server asks the user how many through the host) and shows the tool's answer.
import { App } from "@modelcontextprotocol/ext-apps";

const app = new App({ name: "tollgate-catalog-search", version: "1.0.0" });
const table = document.getElementById("items");
const status = document.getElementById("status");

function say(text, error = false) {
  status.textContent = text;
  status.className = error ? "error" : "";
}

function firstText(result) {
  const block = (result.content ?? []).find((c) => c.type === "text");
  return block ? block.text : "";
}

async function reserve(sku, button) {
  button.disabled = true;
  say(`Reserving ${sku}…`);
  try {
    const result = await app.callServerTool({ name: "catalog.reserve", arguments: { sku } });
    say(firstText(result) || "No answer.", result.isError === true);
  } catch (error) {
    say(`Could not reserve: ${error?.message ?? error}`, true);
  } finally {
    button.disabled = false;
  }
}

function row(item) {
  const tr = document.createElement("tr");
  tr.dataset.sku = item.sku;
  const price = `$${Math.floor(item.price_cents / 100)}.${String(item.price_cents % 100).padStart(2, "0")}`;
  for (const [text, className] of [[item.sku, "sku"], [item.name, "name"], [price, "price"]]) {
    const td = document.createElement("td");
    td.textContent = text;
    td.className = className;
    tr.append(td);
  }
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = "Reserve";
  button.addEventListener("click", () => reserve(item.sku, button));
  const cell = document.createElement("td");
  cell.append(button);
  tr.append(cell);
  return tr;
}

app.addEventListener("toolresult", (result) => {
  const items = result.structuredContent?.items;
  if (result.isError || !Array.isArray(items)) {
    say(firstText(result) || "The search failed.", true);
    return;
  }
  table.tBodies[0].replaceChildren(...items.map(row));
  table.hidden = items.length === 0;
  say(items.length === 0 ? "No items match." : `${items.length} item(s).`);
});

app.addEventListener("toolcancelled", (params) => say(`Search cancelled: ${params.reason ?? "no reason"}`, true));

await app.connect();
