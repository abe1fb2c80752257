// Goal: the build's addon plugin rewrites each installed loader call into a
// static require, and fails the build (never the binary) when a loader call is
// missing or ambiguous. Bundles without `compile`, so it stays fast.

import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { applyPatch, patchesFor, resolveAddon, staticAddonPlugin, type Patch } from "../../scripts/static-addons.ts";

const repoRoot = path.resolve(import.meta.dir, "../..");
const requireFromRoot = createRequire(path.join(repoRoot, "package.json"));
const lmdbAddon = resolveAddon("lmdb", requireFromRoot);
const msgpackrAddon = resolveAddon("msgpackr-extract", requireFromRoot);
const outDirs: string[] = [];

afterAll(() => {
  for (const dir of outDirs) rmSync(dir, { recursive: true, force: true });
});

const samplePatch: Patch = { group: "lmdb", fileSuffix: "/lmdb/native.js", find: "loadNAPI(dirName)", replace: "require('x.node')" };

async function bundle(patches: Patch[]): Promise<{ text: string; patched: Map<string, Patch> }> {
  const outdir = mkdtempSync(path.join(tmpdir(), "orq-static-addons-"));
  outDirs.push(outdir);
  const patched = new Map<string, Patch>();
  await Bun.build({
    entrypoints: [path.join(import.meta.dir, "fixtures/lmdb-entry.ts")],
    target: "bun",
    format: "esm",
    outdir,
    plugins: [staticAddonPlugin(patches, patched)],
    throw: true,
  });
  const [file] = readdirSync(outdir).filter((name) => name.endsWith(".js"));
  return { text: readFileSync(path.join(outdir, file ?? "missing"), "utf8"), patched };
}

describe("applyPatch", () => {
  test("replaces a loader call found exactly once", () => {
    expect(applyPatch("a; loadNAPI(dirName); b", samplePatch, "native.js")).toBe("a; require('x.node'); b");
  });

  test.each([
    ["missing", "a; loadNAPI(otherDir); b", "found it 0 times"],
    ["present twice", "loadNAPI(dirName); loadNAPI(dirName)", "found it 2 times"],
  ])("throws, naming file and pattern, when the call is %s", (_, source, fragment) => {
    expect(() => applyPatch(source, samplePatch, "/x/lmdb/native.js")).toThrow(fragment);
    expect(() => applyPatch(source, samplePatch, "/x/lmdb/native.js")).toThrow("/x/lmdb/native.js");
  });
});

describe("patchesFor", () => {
  test("leaves msgpackr alone when msgpackr-extract is not installed", () => {
    expect(patchesFor(lmdbAddon, null).map((patch) => patch.group)).toEqual(["lmdb", "lmdb"]);
    expect(patchesFor(lmdbAddon, msgpackrAddon)).toHaveLength(4);
  });

  test("every loader call occurs exactly once in the installed packages", () => {
    for (const patch of patchesFor(lmdbAddon, msgpackrAddon)) {
      const packageFile = patch.fileSuffix.replace(/^\//, "");
      const source = readFileSync(path.join(repoRoot, "node_modules", packageFile), "utf8");
      expect(() => applyPatch(source, patch, packageFile)).not.toThrow();
    }
  });
});

describe("staticAddonPlugin in Bun.build", () => {
  test("bundles lmdb with static requires of both addons", async () => {
    const { text, patched } = await bundle(patchesFor(lmdbAddon, msgpackrAddon));
    expect(text).toContain(path.basename(lmdbAddon));
    expect(text).not.toContain("loadNAPI(dirName)");
    expect(text).not.toContain("createRequire(import.meta.url)('msgpackr-extract')");
    expect(new Set([...patched.values()].map((patch) => patch.group))).toEqual(new Set(["lmdb", "msgpackr-extract"]));
  }, 30_000);

  test("fails the build when a loader call is not where it was", async () => {
    const stale = patchesFor(lmdbAddon, msgpackrAddon).map((patch) =>
      patch.fileSuffix === "/lmdb/native.js" ? { ...patch, find: "loadNAPI(renamedDir)" } : patch,
    );
    let message = "";
    try {
      await bundle(stale);
    } catch (error) {
      message = error instanceof AggregateError ? error.errors.map(String).join("\n") : String(error);
    }
    expect(message).toContain("loadNAPI(renamedDir)");
  }, 30_000);
});
