// Reads the conformance suite's result for server-session-lifecycle at 2025-03-26
// (<dir>/server-server-session-lifecycle-<time>/checks.json, as the suite names it) and exits 1 unless it ran, ran checks, and
// every check passed: a skipped check proves nothing and fails the run too.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const [resultsDir] = process.argv.slice(2);
const runs = readdirSync(resultsDir).filter((e) => /^server-(server-)?session-lifecycle-/.test(e));
if (runs.length !== 1) {
  console.error(`server-session-lifecycle at 2025-03-26: ${runs.length} results, expected 1`);
  process.exit(1);
}
const checks = JSON.parse(readFileSync(join(resultsDir, runs[0], "checks.json"), "utf8"));
const bad = checks.filter((c) => c.status !== "SUCCESS");
for (const c of checks) console.log(`  ${c.status.padEnd(8)} ${c.id}`);
if (checks.length === 0 || bad.length > 0) {
  console.error(`server-session-lifecycle at 2025-03-26: ${bad.length} of ${checks.length} checks not passed`);
  process.exit(1);
}
console.log(`server-session-lifecycle at 2025-03-26: ${checks.length} checks, all passed`);
