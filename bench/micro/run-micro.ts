// `npm run bench`: runs every mitata micro-benchmark (bench/micro/*.bench.ts) one
// after another, each in its own process so one file's heap (a million-item
// heap, a million-item engine) does not skew the next. Pass file-name
// fragments to run a subset: `npm run bench -- heap frame`.

import { readdirSync } from "node:fs";
import { join } from "node:path";

const benchDir = import.meta.dir;
const filters = process.argv.slice(2);
const files = readdirSync(benchDir)
  .filter((name) => name.endsWith(".bench.ts"))
  .filter((name) => filters.length === 0 || filters.some((filter) => name.includes(filter)))
  .sort();

if (files.length === 0) {
  console.error(`no bench file matches ${filters.join(", ")}`);
  process.exit(2);
}

let failures = 0;
for (const name of files) {
  console.log(`\n=== ${name}`);
  const child = Bun.spawn([process.execPath, join(benchDir, name)], { stdout: "inherit", stderr: "inherit" });
  const exitCode = await child.exited;
  if (exitCode !== 0) {
    failures += 1;
    console.error(`${name} exited ${exitCode}`);
  }
}
process.exit(failures === 0 ? 0 : 1);
