// Goal: keep the codebase's shape as STYLE.md describes it, checked on every
// test run rather than by memory: imports flow one way (bytes → protocol →
// server → engine → storage; lib is a leaf), each dependency sits behind the
// files that own it, files stay short and open with what they own, and only
// the clock module reads real time.

import { describe, expect, test } from "bun:test";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative, dirname, resolve } from "node:path";

const root = resolve(import.meta.dir, "..");
const srcDir = join(root, "src");

/** Longest source file, in lines: past it a file is doing more than one thing. */
const fileLinesMax = 400;

function listTs(dir: string): string[] {
  const out: string[] = [];
  const stack = [dir];
  while (stack.length > 0) {
    const current = stack.pop()!;
    for (const name of readdirSync(current)) {
      const path = join(current, name);
      if (statSync(path).isDirectory()) stack.push(path);
      else if (name.endsWith(".ts")) out.push(path);
    }
  }
  return out.sort();
}

const files = listTs(srcDir).map((path) => ({
  path,
  rel: relative(srcDir, path),
  text: readFileSync(path, "utf8"),
}));

/** The layer of a file: its first folder under src/, or the file itself at the top. */
function layerOf(rel: string): string {
  const slash = rel.indexOf("/");
  return slash === -1 ? rel.replace(/\.ts$/, "") : rel.slice(0, slash);
}

/** Which layers each layer may import. cli wires everything, so it may import all. */
const allowedImports: Record<string, readonly string[]> = {
  lib: ["lib"],
  // src/limits.ts re-exports the part files of src/limits/; those import nothing.
  limits: ["limits"],
  protocol: ["protocol", "lib", "limits"],
  storage: ["storage", "lib", "limits"],
  engine: ["engine", "storage", "lib", "limits"],
  server: ["server", "protocol", "engine", "storage", "lib", "limits"],
  // Observability reads every layer's numbers (error codes, breaker states, commit stats) but drives none.
  observability: ["observability", "protocol", "storage", "lib", "limits"],
  client: ["client", "protocol", "lib", "limits"],
  // The beanstalkd front end: its own parser and commands on the engine, reusing the server's socket plumbing.
  beanstalk: ["beanstalk", "server", "engine", "storage", "lib", "limits"],
  // The web dashboard calls the ops through the server's dispatcher and the engine's read-only inspect queries.
  dashboard: ["dashboard", "server", "engine", "storage", "protocol", "lib", "limits"],
  // Cluster mode: routing and the node's wiring over the engine and the PostgreSQL store.
  cluster: ["cluster", "engine", "storage", "protocol", "lib", "limits"],
  cli: ["cli", "client", "server", "beanstalk", "engine", "storage", "protocol", "observability", "dashboard", "cluster", "lib", "limits"],
};

/** Packages and the only places allowed to import them (prefixes of paths under src/). */
const packageOwners: Record<string, readonly string[]> = {
  lmdb: ["storage/lmdb/", "cli/self-check.ts"],
  "@msgpack/msgpack": ["protocol/", "storage/record-codec.ts", "client/"],
  "prom-client": ["observability/metrics.ts"],
  commander: ["cli/"],
  // Native calls are a crash risk: two bindings, each in one file (flock for the data dir lock; execve for the allocator settings, at start).
  "bun:ffi": ["storage/lmdb/flock.ts"],
  uplot: ["dashboard/assets.ts"],
};

function importsOf(text: string): string[] {
  const specs: string[] = [];
  const pattern = /^\s*(?:import|export)\b[^'"]*?from\s+["']([^"']+)["']|^\s*import\s+["']([^"']+)["']/gm;
  for (const match of text.matchAll(pattern)) specs.push((match[1] ?? match[2])!);
  for (const match of text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) specs.push(match[1]!);
  return specs;
}

/** Each file's imports of other files under src/ (relative paths from src/). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets: string[] = [];
    for (const spec of importsOf(file.text)) {
      if (!spec.startsWith(".")) continue;
      const target = relative(srcDir, resolve(dirname(file.path), spec));
      if (!target.startsWith("..")) targets.push(target);
    }
    graph.set(file.rel, targets);
  }
  return graph;
}

/** Strongly connected components with more than one file: the import circles (Tarjan's algorithm). */
function importCircles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const members: string[] = [];
    for (;;) {
      const member = stack.pop()!;
      onStack.delete(member);
      members.push(member);
      if (member === node) break;
    }
    if (members.length > 1) circles.push(members.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return circles;
}

/**
 * The one import circle left (../shared/REVIEW.md, item 10): the engine's
 * deadline heap holds typed back-pointers to every kind of deadline, so
 * deadlines, items, topics, waiters and the files around them import one
 * another (mostly as types). A generic deadline queue would end it. Until
 * then it may shrink but not grow, and no other circle may appear.
 */
const knownEngineCircle = new Set([
  "engine/api.ts",
  "engine/deadlines.ts",
  "engine/deferred-lease-writes.ts",
  "engine/ended-items.ts",
  "engine/failures.ts",
  "engine/item-bytes.ts",
  "engine/item-parts.ts",
  "engine/item-states.ts",
  "engine/item-table.ts",
  "engine/item.ts",
  "engine/list-cursor.ts",
  "engine/list-ready.ts",
  "engine/list.ts",
  "engine/namespace.ts",
  "engine/op-context.ts",
  "engine/outcome-table.ts",
  "engine/pause.ts",
  "engine/topic.ts",
  "engine/views.ts",
  "engine/waiters.ts",
  "engine/writable-shards.ts",
]);

describe("tidy", () => {
  test("the tree has source files to check", () => {
    expect(files.length).toBeGreaterThan(20);
  });

  test("imports flow one way between layers", () => {
    const violations: string[] = [];
    for (const file of files) {
      const layer = layerOf(file.rel);
      const allowed = allowedImports[layer];
      if (allowed === undefined) {
        violations.push(`${file.rel}: layer "${layer}" has no import rule in tidy.test.ts`);
        continue;
      }
      for (const spec of importsOf(file.text)) {
        if (!spec.startsWith(".")) continue;
        const target = relative(srcDir, resolve(dirname(file.path), spec));
        // The package manifest is read for the version string only.
        if (target === "../package.json") continue;
        if (target.startsWith("..")) {
          violations.push(`${file.rel} imports ${spec}, outside src/`);
          continue;
        }
        const targetLayer = layerOf(target);
        if (!allowed.includes(targetLayer)) violations.push(`${file.rel} (${layer}) imports ${target} (${targetLayer})`);
      }
    }
    expect(violations).toEqual([]);
  });

  test("each package is imported only by the files that own it", () => {
    const violations: string[] = [];
    for (const file of files) {
      for (const spec of importsOf(file.text)) {
        const owners = packageOwners[spec];
        if (owners === undefined) continue;
        if (!owners.some((prefix) => file.rel.startsWith(prefix))) violations.push(`${file.rel} imports ${spec}`);
      }
    }
    expect(violations).toEqual([]);
  });

  test(`source files stay under ${fileLinesMax} lines`, () => {
    const long = files
      .map((file) => ({ rel: file.rel, lines: file.text.split("\n").length }))
      .filter((file) => file.lines > fileLinesMax)
      .map((file) => `${file.rel}: ${file.lines} lines`);
    expect(long).toEqual([]);
  });

  test("every source file opens with a comment saying what it owns", () => {
    const bare = files.filter((file) => {
      const lines = file.text.split("\n");
      const first = lines[0]?.startsWith("#!") ? lines[1] : lines[0];
      return !(first?.startsWith("//") || first?.startsWith("/*"));
    });
    expect(bare.map((file) => file.rel)).toEqual([]);
  });

  test("no grab-bag modules", () => {
    const grabBags = files.filter((file) => /(^|\/)(utils?|helpers?|misc|common)\.ts$/.test(file.rel));
    expect(grabBags.map((file) => file.rel)).toEqual([]);
  });

  test("only the clock reads real time, and the engine arms no timers", () => {
    const violations: string[] = [];
    for (const file of files) {
      if (file.rel.startsWith("engine/") && /\bDate\.now\(|\bperformance\.now\(/.test(file.text)) {
        violations.push(`${file.rel} reads real time`);
      }
      if (file.rel.startsWith("engine/") && /\bset(Timeout|Interval|Immediate)\(/.test(file.text)) {
        violations.push(`${file.rel} arms a timer`);
      }
    }
    expect(violations).toEqual([]);
  });

  test("no import circles but the engine's known one, which may only shrink", () => {
    const circles = importCircles(importGraph());
    const outside = circles.filter((circle) => circle.some((file) => !knownEngineCircle.has(file)));
    expect(outside).toEqual([]);
  });

  test("the circle finder finds a circle", () => {
    const graph = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts", "d.ts"]],
      ["d.ts", []],
    ]);
    expect(importCircles(graph)).toEqual([["a.ts", "b.ts", "c.ts"]]);
  });

  test("no empty catch blocks", () => {
    const violations = files
      .filter((file) => /catch\s*(\([^)]*\))?\s*\{\s*\}/.test(file.text))
      .map((file) => file.rel);
    expect(violations).toEqual([]);
  });
});
