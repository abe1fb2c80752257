// Builds the client package, clients/typescript/ (package name orq-client):
// `dist/index.js`, one ES module bundled from src/client with the protocol,
// lib and limits code it shares with the server, and its types under
// `dist/types/` (tsc, declarations only). src/client is the one source: the
// server's CLI and tests import it directly, and the package carries this
// build of it, so nothing is copied by hand. The package's own dependencies
// (and optional peers) stay imports, which npm installs beside it; nothing
// else may be left unbundled, so the package needs no Bun, LMDB or native
// module.
//
// The output is committed, so `npm install <path or git url>` works without
// running any build on the installing machine (npm runs no scripts there);
// test/build/client-package.test.ts rebuilds it and fails when the committed
// files differ, so they cannot fall behind the source.
//
// Usage: bun scripts/build-client.ts [--outdir DIR]   (default clients/typescript/dist)

import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

const repoRoot = path.resolve(import.meta.dir, "..");
const packageDir = path.join(repoRoot, "clients/typescript");
const outdirFlag = process.argv.indexOf("--outdir");
const outdir = path.resolve(outdirFlag >= 0 ? (process.argv[outdirFlag + 1] ?? "") : path.join(packageDir, "dist"));

function fail(message: string): never {
  console.error(`build-client failed: ${message}`);
  process.exit(1);
}

rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });

interface Manifest {
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}
const manifest = JSON.parse(readFileSync(path.join(packageDir, "package.json"), "utf8")) as Manifest;
const external = [...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})];
const built = await Bun.build({
  entrypoints: [path.join(repoRoot, "src/client/index.ts")],
  root: repoRoot,
  target: "node",
  format: "esm",
  external,
  minify: false,
  sourcemap: "none",
});
if (!built.success) fail(built.logs.map(String).join("\n"));
const [output] = built.outputs;
if (output === undefined || built.outputs.length !== 1) fail(`expected one output file, got ${built.outputs.length}`);
const code = await output.text();

// Every bare import left in the bundle must be a Node built-in or a package the manifest declares.
const left = [...code.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g)].map((m) => (m[1] ?? m[2])!);
const undeclared = left.filter((spec) => !spec.startsWith("node:") && !external.includes(spec));
if (undeclared.length > 0) fail(`the bundle imports packages the client package does not declare: ${[...new Set(undeclared)].join(", ")}`);
writeFileSync(path.join(outdir, "index.js"), `// Built by scripts/build-client.ts from src/client; do not edit.\n${code}`);

// tsc writes where tsconfig.client.json says; with --outdir the declarations follow it.
const tscPath = path.join(repoRoot, "node_modules/typescript/bin/tsc");
const tsc = spawnSync(process.execPath, [tscPath, "-p", path.join(repoRoot, "tsconfig.client.json"), "--outDir", path.join(outdir, "types")], {
  cwd: repoRoot,
  encoding: "utf8",
});
if (tsc.status !== 0) fail(`tsc exited ${tsc.status}:\n${tsc.stdout}${tsc.stderr}`);
console.log(`built ${path.relative(process.cwd(), outdir) || "."}/index.js and types/`);
