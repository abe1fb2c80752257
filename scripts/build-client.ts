// Builds the client for Node (issue 14): `dist-node/index.js`, one ES module
// bundled from src/client (with the protocol code it shares), and its types
// under `dist-node/types/` (tsc, declarations only). package.json's `exports`
// sends Bun to the TypeScript source and Node (and TypeScript) here.
//
// The output is committed, so `npm install <path or git url>` works without
// running any build on the installing machine (npm runs no scripts there);
// test/build/client-package.test.ts rebuilds it and fails when the committed
// files differ, so they cannot fall behind the source.
//
// Usage: bun scripts/build-client.ts [--outdir DIR]   (default dist-node)

import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

const repoRoot = path.resolve(import.meta.dir, "..");
const outdirFlag = process.argv.indexOf("--outdir");
const outdir = path.resolve(outdirFlag >= 0 ? (process.argv[outdirFlag + 1] ?? "") : path.join(repoRoot, "dist-node"));

function fail(message: string): never {
  console.error(`build-client failed: ${message}`);
  process.exit(1);
}

rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });

// Dependencies stay imports (npm installs them beside the package); only our own code is bundled.
const packageJson = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { dependencies: Record<string, string> };
const built = await Bun.build({
  entrypoints: [path.join(repoRoot, "src/client/index.ts")],
  root: repoRoot,
  target: "node",
  format: "esm",
  external: Object.keys(packageJson.dependencies),
  minify: false,
  sourcemap: "none",
});
if (!built.success) fail(built.logs.map(String).join("\n"));
const [output] = built.outputs;
if (output === undefined || built.outputs.length !== 1) fail(`expected one output file, got ${built.outputs.length}`);
writeFileSync(path.join(outdir, "index.js"), `// Built by scripts/build-client.ts from src/client; do not edit.\n${await output.text()}`);

// tsc writes where tsconfig.client.json says; with --outdir the declarations follow it.
const tscPath = path.join(repoRoot, "node_modules/typescript/bin/tsc");
const tsc = spawnSync(process.execPath, [tscPath, "-p", path.join(repoRoot, "tsconfig.client.json"), "--outDir", path.join(outdir, "types")], {
  cwd: repoRoot,
  encoding: "utf8",
});
if (tsc.status !== 0) fail(`tsc exited ${tsc.status}:\n${tsc.stdout}${tsc.stderr}`);
console.log(`built ${path.relative(process.cwd(), outdir) || "."}/index.js and types/`);
