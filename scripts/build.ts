// Builds the standalone `dist/orq` executable (issue 7): one file that runs
// with no Bun, no Node and no node_modules on the target machine.
//
// `bun build --compile` cannot follow the dynamic native-addon loaders used by
// lmdb and msgpackr (`loadNAPI(dirName)` looks for the addon on disk at run
// time), so a bundler plugin rewrites each loader call into a static `require`
// of the addon file that the library's own resolver picks on this build host.
// Bun then embeds the addon and extracts it into $TMPDIR when the binary starts.
// A pattern that is no longer where we expect it fails the BUILD, never the
// binary: a silent fallback would ship a server without its storage engine.
//
// Usage: bun scripts/build.ts [--entry src/cli/main.ts] [--outfile dist/orq] [--no-bytecode]
// The binary targets the build host's platform (no cross-compilation: the
// addon chosen is the host's).

import { createRequire } from "node:module";
import path from "node:path";
import { existsSync, statSync } from "node:fs";
import { patchesFor, resolveAddon, staticAddonPlugin, type Patch } from "./static-addons.ts";

const repoRoot = path.resolve(import.meta.dir, "..");
const requireFromRoot = createRequire(path.join(repoRoot, "package.json"));

interface BuildArgs {
  entry: string;
  outfile: string;
  bytecode: boolean;
}

function parseArgs(argv: readonly string[]): BuildArgs {
  const args: BuildArgs = {
    entry: path.join(repoRoot, "src/cli/main.ts"),
    outfile: path.join(repoRoot, "dist/orq"),
    bytecode: true,
  };
  for (let index = 0; index < argv.length; index += 1) {
    const flag = argv[index];
    const value = argv[index + 1];
    if (flag === "--entry" && value !== undefined) {
      args.entry = path.resolve(value);
      index += 1;
    } else if (flag === "--outfile" && value !== undefined) {
      args.outfile = path.resolve(value);
      index += 1;
    } else if (flag === "--no-bytecode") {
      args.bytecode = false;
    } else {
      fail(`unknown argument ${String(flag)}\nusage: bun scripts/build.ts [--entry FILE] [--outfile FILE] [--no-bytecode]`);
    }
  }
  return args;
}

function fail(message: string): never {
  console.error(`build failed: ${message}`);
  process.exit(1);
}

/** The msgpackr-extract addon if this host has one installed; msgpackr falls back to pure JS without it. */
function resolveOptionalMsgpackrAddon(): string | null {
  try {
    requireFromRoot.resolve("msgpackr-extract/package.json");
  } catch (error) {
    console.warn(`note: msgpackr-extract is not installed (${(error as Error).message}); msgpackr will decode strings in pure JS`);
    return null;
  }
  return resolveAddonOrFail("msgpackr-extract");
}

function resolveAddonOrFail(packageName: string): string {
  try {
    return resolveAddon(packageName, requireFromRoot);
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (!existsSync(args.entry)) fail(`entry ${args.entry} does not exist`);

  const lmdbAddon = resolveAddonOrFail("lmdb");
  const msgpackrAddon = resolveOptionalMsgpackrAddon();
  const patches = patchesFor(lmdbAddon, msgpackrAddon);
  const patchedFiles = new Map<string, Patch>();

  const startedMs = performance.now();
  let result: Bun.BuildOutput;
  try {
    result = await Bun.build({
      entrypoints: [args.entry],
      target: "bun",
      format: "esm",
      // Bytecode cuts start-up from about 30 ms to about 21 ms (measured when the build was written).
      bytecode: args.bytecode,
      minify: false,
      sourcemap: "none",
      plugins: [staticAddonPlugin(patches, patchedFiles)],
      compile: {
        outfile: args.outfile,
        // A server binary must not pick up a stray .env or bunfig.toml from
        // whatever directory it is started in.
        autoloadDotenv: false,
        autoloadBunfig: false,
        autoloadTsconfig: false,
        autoloadPackageJson: false,
      },
      metafile: true,
      throw: true,
    });
  } catch (error) {
    fail(error instanceof AggregateError ? error.errors.map(String).join("\n") : String(error));
  }
  if (!result.success) fail(result.logs.map(String).join("\n"));

  // Every addon group whose package ended up in the bundle must have been
  // patched; lmdb must be in the bundle whenever the entry uses storage.
  const patchedGroups = new Set([...patchedFiles.values()].map((patch) => patch.group));
  const bundledInputs = Object.keys(result.metafile?.inputs ?? {});
  const bundledLmdb = bundledInputs.some((input) => /node_modules[\\/]lmdb[\\/]/.test(input));
  if (bundledLmdb && !patchedGroups.has("lmdb")) fail("lmdb was bundled without its addon loader patched");
  if (!existsSync(args.outfile)) fail(`Bun.build reported success but ${args.outfile} is missing`);

  const sizeBytes = statSync(args.outfile).size;
  const seconds = ((performance.now() - startedMs) / 1000).toFixed(1);
  console.log(`built ${path.relative(process.cwd(), args.outfile)} (${(sizeBytes / 1024 / 1024).toFixed(1)} MiB) in ${seconds} s`);
  for (const [file, patch] of patchedFiles) {
    console.log(`  static ${patch.group} addon: ${path.relative(repoRoot, file)}`);
  }
  if (!patchedGroups.has("lmdb")) console.warn("  note: the entry does not bundle lmdb");
  if (msgpackrAddon !== null && !patchedGroups.has("msgpackr-extract") && patchedGroups.has("lmdb")) {
    fail("msgpackr-extract is installed but its loader was not patched: msgpackr would silently fall back to pure JS");
  }
}

await main();
