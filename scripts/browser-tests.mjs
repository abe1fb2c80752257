// Runs the dashboard's browser tests (test/dashboard/browser/*.browser.mjs)
// under `node --test`: Playwright misbehaves under Bun, so these are the
// project's only tests outside `bun test`. Usage:
//   node scripts/browser-tests.mjs [--junit FILE]
// With --junit, node's JUnit report is written to FILE with its counts
// copied onto the <testsuites> element (node writes them only as comments),
// so .ci/run's summary counts these tests like the others. Without Debian's
// chromium (/usr/bin/chromium, or $ORQ_CHROMIUM) the tests report skipped.

import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = resolve(fileURLToPath(new URL(".", import.meta.url)), "..");
const testDir = join(repoRoot, "test/dashboard/browser");
const files = readdirSync(testDir).filter((name) => name.endsWith(".browser.mjs")).sort().map((name) => join(testDir, name));

const junitIndex = process.argv.indexOf("--junit");
const junitPath = junitIndex === -1 ? null : resolve(process.argv[junitIndex + 1] ?? "");
const scratch = mkdtempSync(join(tmpdir(), "orq-browser-tests-"));
const rawJunit = join(scratch, "junit.xml");

// One file at a time: each starts its own server and browser, and the machine may be small.
const args = ["--test", "--test-concurrency=1", "--test-reporter=spec", "--test-reporter-destination=stdout"];
if (junitPath !== null) args.push("--test-reporter=junit", `--test-reporter-destination=${rawJunit}`);
const run = spawnSync(process.execPath, [...args, ...files], { cwd: repoRoot, stdio: "inherit" });

if (junitPath !== null) {
  let xml;
  try {
    xml = readFileSync(rawJunit, "utf8");
  } catch (error) {
    console.error(`browser tests wrote no JUnit report (${error.message}); counting one failure`);
    xml = '<?xml version="1.0" encoding="utf-8"?>\n<testsuites>\n\t<!-- tests 1 -->\n\t<!-- fail 1 -->\n</testsuites>\n';
  }
  const counted = (name) => Number(new RegExp(`<!-- ${name} (\\d+) -->`).exec(xml)?.[1] ?? 0);
  const tests = counted("tests");
  const failures = counted("fail") + counted("cancelled");
  const skipped = counted("skipped") + counted("todo");
  const header = `<testsuites name="dashboard-browser" tests="${tests}" failures="${failures}" errors="0" skipped="${skipped}">`;
  writeFileSync(junitPath, xml.replace(/<testsuites>/, header));
}
rmSync(scratch, { recursive: true, force: true });
process.exit(run.status ?? 1);
