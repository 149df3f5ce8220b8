// Reads scripts/conformance-client's runs (<dir>/runs.txt: "<revision> <scenario> <status>") and
// the suite's checks (<dir>/<revision>/<scenario>-<time>/checks.json), compares them with the
// client known-failures list, prints a table and the totals, and exits 1 on an unexpected
// failure, on a listed scenario that passes, or on a listed scenario that did not run.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

const [resultsDir, knownPath] = process.argv.slice(2);
const known = new Map();
for (const line of readFileSync(knownPath, "utf8").split("\n")) {
  const text = line.trim();
  if (!text || text.startsWith("#")) continue;
  const [revision, scenario, ...reason] = text.split(/\s+/);
  known.set(`${revision} ${scenario}`, reason.join(" "));
}

// The failed and warned check ids of a run, from its newest results directory.
function checks(revision, scenario) {
  const dir = join(resultsDir, revision, dirname(scenario));
  if (!existsSync(dir)) return { failed: [], warned: [] };
  const base = scenario.split("/").pop();
  const runs = readdirSync(dir).filter((e) => e.startsWith(`${base}-20`)).sort();
  const last = runs.at(-1);
  if (!last || !existsSync(join(dir, last, "checks.json"))) return { failed: [], warned: [] };
  const all = JSON.parse(readFileSync(join(dir, last, "checks.json"), "utf8"));
  return {
    failed: all.filter((c) => c.status === "FAILURE").map((c) => c.id),
    warned: all.filter((c) => c.status === "WARNING").map((c) => c.id),
  };
}

let unexpected = 0;
let passed = 0;
let failed = 0;
const seen = new Set();
const runs = readFileSync(join(resultsDir, "runs.txt"), "utf8").split("\n").filter(Boolean);
for (const line of runs) {
  const [revision, scenario, status] = line.split(" ");
  const key = `${revision} ${scenario}`;
  seen.add(key);
  const ok = status === "0";
  const { failed: ids, warned } = checks(revision, scenario);
  let verdict;
  if (ok && known.has(key)) {
    verdict = "PASS (listed as a known failure: remove it from the list)";
    unexpected++;
  } else if (ok) {
    verdict = "pass";
  } else if (known.has(key)) {
    verdict = `known failure: ${known.get(key)}`;
  } else {
    const why = [...ids, ...warned.map((w) => `${w} (warning)`)].join(", ") || "the client failed or timed out";
    verdict = `FAIL: ${why}`;
    unexpected++;
  }
  if (ok) passed++;
  else failed++;
  console.log(`${revision.padEnd(10)}  ${scenario.padEnd(46)} ${verdict}`);
}
for (const key of known.keys()) {
  if (!seen.has(key)) {
    console.log(`${key}: listed as a known failure but not run (stale entry)`);
    unexpected++;
  }
}
const knownFailed = runs.filter((l) => !l.endsWith(" 0") && known.has(l.split(" ").slice(0, 2).join(" "))).length;
console.log(`conformance (client): ${passed} passed, ${failed} failed (${knownFailed} known)`);
if (runs.length === 0) {
  console.log("conformance (client): no scenario ran");
  process.exit(1);
}
process.exit(unexpected === 0 ? 0 : 1);
