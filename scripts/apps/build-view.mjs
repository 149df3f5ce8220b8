// Bundles the catalog demo's MCP Apps view into one self-contained HTML file: esbuild bundles
// the view's script (with @modelcontextprotocol/ext-apps and what it imports, pinned by
// scripts/apps/package-lock.json), minified, and the script replaces the page's
// `<!-- view-script -->` marker inline. The output is committed
// (crates/tollgate-cli/examples/catalog/view/search.bundle.html) so building the demo never needs
// npm; scripts/apps-e2e rebuilds it and fails when it differs.
// Usage: node build-view.mjs VIEW_DIR OUT_FILE   (run from the directory holding node_modules)
import { readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { build } from "esbuild";

const [viewDir, out] = process.argv.slice(2);
const bundled = await build({
  entryPoints: [join(viewDir, "search.mjs")],
  bundle: true,
  // The packages come from the working directory's node_modules, not from beside the view.
  nodePaths: [resolve("node_modules")],
  format: "esm",
  platform: "browser",
  target: "es2022",
  minify: true,
  legalComments: "none",
  charset: "utf8",
  write: false,
  logLevel: "warning",
});
// An inline script ends at the first `</script`; the bundle must not contain one.
const script = bundled.outputFiles[0].text.replaceAll("</script", "<\\/script");
const page = await readFile(join(viewDir, "search.html"), "utf8");
const marker = "<!-- view-script -->";
if (page.split(marker).length !== 2) throw new Error(`search.html must hold ${marker} once`);
const html = page.replace(marker, () => `<script type="module">${script.trimEnd()}</script>`);
await writeFile(out, html);
console.log(`view: ${out} (${html.length} bytes)`);
