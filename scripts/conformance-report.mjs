// Reads the conformance suite's per-scenario results (<dir>/<revision>/server-<scenario>-<time>/
// checks.json), compares them with the known-failures list, prints a table and the totals, and
// exits 1 on an unexpected failure, on a listed scenario that passes, on a stale entry, or on a
// server scenario the suite lists (the arguments after the list's path) that did not run.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const [resultsDir, knownPath, ...listed] = process.argv.slice(2);
const known = new Map();
for (const line of readFileSync(knownPath, "utf8").split("\n")) {
  const text = line.trim();
  if (!text || text.startsWith("#")) continue;
  const [revision, scenario, ...reason] = text.split(/\s+/);
  known.set(`${revision} ${scenario}`, reason.join(" "));
}

const rows = [];
for (const revision of readdirSync(resultsDir).sort()) {
  for (const entry of readdirSync(join(resultsDir, revision)).sort()) {
    const match = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(entry);
    if (!match) continue;
    const checks = JSON.parse(readFileSync(join(resultsDir, revision, entry, "checks.json"), "utf8"));
    const failed = checks.filter((c) => c.status === "FAILURE");
    const warned = checks.filter((c) => c.status === "WARNING");
    // A scenario the suite itself skips entirely (pending upstream) proves nothing: it is
    // reported apart, neither passed nor failed.
    const skipped = checks.length > 0 && checks.every((c) => c.status === "SKIPPED");
    rows.push({ revision, scenario: match[1], passed: failed.length === 0 && !skipped, skipped, checks: checks.length, failed, warned });
  }
}

let unexpected = 0;
const seen = new Set();
for (const row of rows) {
  const key = `${row.revision} ${row.scenario}`;
  seen.add(key);
  const listed = known.has(key);
  let verdict;
  if (row.skipped) {
    verdict = "skipped by the suite (every check SKIPPED upstream)";
  } else if (row.passed && listed) {
    verdict = "PASS (listed as a known failure: remove it from the list)";
    unexpected++;
  } else if (row.passed) {
    // A warning is a SHOULD the server does not meet (or a fixture it lacks): name it.
    const warnings = row.warned.length ? ` (warnings: ${row.warned.map((c) => c.id).join(", ")})` : "";
    verdict = row.checks === 0 ? "pass (the scenario ran no checks)" : `pass${warnings}`;
  } else if (listed) {
    verdict = `known failure: ${known.get(key)}`;
  } else {
    verdict = `FAIL: ${row.failed.map((c) => c.id).join(", ")}`;
    unexpected++;
  }
  console.log(`${row.revision}  ${row.scenario.padEnd(46)} ${verdict}`);
}
for (const key of known.keys()) {
  if (!seen.has(key)) {
    console.log(`${key}: listed as a known failure but not run (stale entry)`);
    unexpected++;
  }
}
const scored = rows.filter((r) => !r.skipped);
const skippedCount = rows.length - scored.length;
const passed = scored.filter((r) => r.passed).length;
const warnedPasses = scored.filter((r) => r.passed && r.warned.length).length;
const failedRows = scored.filter((r) => !r.passed);
const knownFailed = failedRows.filter((r) => known.has(`${r.revision} ${r.scenario}`)).length;
console.log(`conformance: ${warnedPasses} passing scenario(s) with warnings, ${skippedCount} skipped by the suite`);
console.log(`conformance: ${passed} passed, ${failedRows.length} failed (${knownFailed} known)`);
// Every server scenario the suite lists ran, on some revision.
const ran = new Set(rows.map((r) => r.scenario));
const missing = listed.filter((s) => !ran.has(s));
console.log(`conformance: ${listed.length - missing.length} of the suite's ${listed.length} server scenarios run`);
for (const scenario of missing) {
  console.log(`${scenario}: listed by the suite but not run`);
  unexpected++;
}
if (rows.length === 0) {
  console.log("conformance: no results were produced");
  process.exit(1);
}
process.exit(unexpected === 0 ? 0 : 1);
