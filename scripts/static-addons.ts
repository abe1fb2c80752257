// The bundler plugin behind scripts/build.ts: it turns the dynamic
// native-addon loaders of lmdb and msgpackr-extract into static `require`s of
// the addon files, so `Bun.build({ compile })` embeds them. Each rewrite must
// find its loader call exactly once; otherwise it throws and the build fails
// (a silently unpatched loader would ship a binary that cannot open storage).

import { createRequire } from "node:module";
import path from "node:path";
import { existsSync } from "node:fs";
import type { BunPlugin } from "bun";

/**
 * Where `node-gyp-build-optional-packages` (the loader lmdb and
 * msgpackr-extract both use) finds the addon for `packageDir` on this host.
 * Asking the loader itself keeps glibc/musl and napi/abi choices identical to
 * what `bun src/cli/main.ts` loads.
 */
export function resolveAddon(packageName: string, requireFromRoot: NodeJS.Require): string {
  const packageDir = path.dirname(requireFromRoot.resolve(`${packageName}/package.json`));
  const loaderPath = createRequire(path.join(packageDir, "package.json")).resolve("node-gyp-build-optional-packages");
  const loader = requireFromRoot(loaderPath) as { resolve(dir: string): string };
  const addonPath = loader.resolve(packageDir);
  if (!existsSync(addonPath)) throw new Error(`${packageName}: its loader chose ${addonPath}, which does not exist`);
  return addonPath;
}

/** One source rewrite: in the file whose path ends with `fileSuffix`, `find` must occur exactly once. */
export interface Patch {
  /** Which addon the patch makes static; the build checks every group was patched at least once. */
  group: "lmdb" | "msgpackr-extract";
  fileSuffix: string;
  find: string;
  replace: string;
}

/**
 * The static require that replaces lmdb's loader. Loading can still fail on the
 * target machine (the binary extracts the addon into $TMPDIR, which may be
 * missing, read-only or mounted noexec, or glibc may be too old), so the
 * replacement rethrows with a message an operator can act on.
 */
function lmdbAddonRequire(addonPath: string): string {
  const hint =
    "orq: LMDB's native addon failed to load. The binary extracts it into $TMPDIR (or /tmp) before loading it: " +
    "check that this directory exists, is writable and is not mounted noexec, and that the system's glibc is recent enough. Cause: ";
  return `(() => { try { return require(${JSON.stringify(addonPath)}); } catch (cause) { throw new Error(${JSON.stringify(hint)} + (cause && cause.message), { cause }); } })()`;
}

export function patchesFor(lmdbAddon: string, msgpackrAddon: string | null): Patch[] {
  const lmdbRequire = lmdbAddonRequire(lmdbAddon);
  const patches: Patch[] = [
    // ESM build of lmdb (resolved by Bun's "default"/"import" conditions).
    { group: "lmdb", fileSuffix: "/lmdb/native.js", find: "loadNAPI(dirName)", replace: lmdbRequire },
    // CommonJS build, used if anything `require`s lmdb.
    { group: "lmdb", fileSuffix: "/lmdb/dist/index.cjs", find: 'loadNAPI__default["default"](dirName)', replace: lmdbRequire },
  ];
  if (msgpackrAddon === null) return patches;
  // msgpackr loads its optional string extractor through createRequire, which
  // the bundler cannot see; make it a plain require so msgpackr-extract is
  // bundled, then make msgpackr-extract's own loader static.
  const dynamicRequire = "createRequire(import.meta.url)('msgpackr-extract')";
  patches.push(
    { group: "msgpackr-extract", fileSuffix: "/msgpackr/node-index.js", find: dynamicRequire, replace: "require('msgpackr-extract')" },
    {
      group: "msgpackr-extract",
      fileSuffix: "/msgpackr-extract/index.js",
      find: "require('node-gyp-build-optional-packages')(__dirname)",
      replace: `require(${JSON.stringify(msgpackrAddon)})`,
    },
  );
  return patches;
}

function countOccurrences(text: string, needle: string): number {
  let count = 0;
  let from = text.indexOf(needle);
  while (from !== -1) {
    count += 1;
    from = text.indexOf(needle, from + needle.length);
  }
  return count;
}

/** The patched source; throws (failing the build) unless `patch.find` occurs exactly once. */
export function applyPatch(source: string, patch: Patch, filePath: string): string {
  const found = countOccurrences(source, patch.find);
  if (found !== 1) {
    throw new Error(
      `${filePath}: expected the loader call \`${patch.find}\` exactly once, found it ${found} times. ` +
        `The ${patch.group} package changed; update scripts/static-addons.ts.`,
    );
  }
  return source.replace(patch.find, patch.replace);
}

export function staticAddonPlugin(patches: readonly Patch[], patchedFiles: Map<string, Patch>): BunPlugin {
  const suffixes = patches.map((patch) => patch.fileSuffix.replaceAll(".", "\\.").replaceAll("/", "[\\\\/]"));
  const filter = new RegExp(`(${suffixes.join("|")})$`);
  return {
    name: "orq-static-native-addons",
    setup(build) {
      build.onLoad({ filter }, async (loadArgs) => {
        const normalized = loadArgs.path.replaceAll("\\", "/");
        const patch = patches.find((candidate) => normalized.endsWith(candidate.fileSuffix));
        if (patch === undefined) throw new Error(`no patch for ${loadArgs.path}`);
        const contents = applyPatch(await Bun.file(loadArgs.path).text(), patch, loadArgs.path);
        patchedFiles.set(loadArgs.path, patch);
        return { contents, loader: "js" };
      });
    },
  };
}

