// Goal: keep the codebase's shape as STYLE.md describes it, checked on every
// test run rather than by memory: imports flow one way (bytes → protocol →
// server → engine → storage; lib is a leaf) and never in a circle, each
// dependency sits behind the files that own it, files and functions stay
// short, files open with what they own, and only the clock module reads real
// time.

import { describe, expect, test } from "bun:test";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative, dirname, resolve } from "node:path";
import { codeOnly, functionSpans } from "./support/source-scan.ts";

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
  "bun:ffi": ["storage/lmdb/flock.ts", "storage/lmdb/libc.ts", "storage/lmdb/map-pages.ts"],
  uplot: ["dashboard/assets.ts"],
};

/** Layers held to the time rule: they read time only through lib/clock.ts. */
const timeRuleLayers = ["engine", "protocol", "server"];

/**
 * The server's own timers, each with why it is a real-time wait. The
 * engine's deadlines are not among them: the one deadline timer serves them.
 */
const serverTimers: Record<string, string> = {
  "server/deadline-timer.ts": "the one timer, armed for the engine's earliest deadline",
  "server/server.ts": "the bound on a graceful shutdown's wait for in-flight replies",
  "server/connection.ts": "the bound on flushing a closing connection's replies before its socket is destroyed",
};

/** Layers held to the module-state rule: no top-level `let` or `var`, so two engines or servers in one process share nothing that changes. */
const moduleStateLayers = ["engine", "storage", "server", "lib"];

/** Top-level `let`/`var` bindings still allowed, by file and name, each with why it is harmless. */
const moduleStateAllowed: Record<string, string> = {
  "storage/record-codec.ts lastNs":
    "the last namespace string decoded, offered back to the next decode to reuse: strings are immutable, so sharing it between stores changes which equal string a record holds, never its value; decode callers (stores, recovery, cluster) hold no decoder object to own it",
  "storage/record-codec.ts lastTopic": "the last topic string decoded, as lastNs",
};

/**
 * The names of a file's top-level `let` and `var` bindings (`file name`).
 * Formatting puts top-level statements at column 0 and everything nested
 * deeper, so a binding at the start of a line is a module's.
 */
function topLevelMutables(rel: string, code: string): string[] {
  const found: string[] = [];
  for (const match of code.matchAll(/^(?:export\s+)?(?:let|var)\s+([A-Za-z_$][\w$]*)/gm)) found.push(`${rel} ${match[1]!}`);
  return found;
}

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

/**
 * Import circles, each as the path that closes it (`a.ts → b.ts → a.ts`),
 * found by a depth-first walk: a file reached again while it is still on the
 * walk's path closes a circle. Type-only imports count: the rule is about
 * layering (what a file must know to be read), and a type import is as much
 * knowledge as a value import. Each circle is reported once, where the walk
 * met it; when none is reported there is none.
 */
function importCircles(graph: Map<string, string[]>): string[] {
  const done = new Set<string>();
  const onPath = new Map<string, number>();
  const path: string[] = [];
  const circles: string[] = [];
  for (const root of graph.keys()) {
    if (done.has(root)) continue;
    // An explicit stack of (file, next import to follow): no recursion.
    const stack: Array<{ node: string; next: number }> = [{ node: root, next: 0 }];
    onPath.set(root, 0);
    path.push(root);
    while (stack.length > 0) {
      const frame = stack[stack.length - 1]!;
      const targets = graph.get(frame.node) ?? [];
      if (frame.next < targets.length) {
        const target = targets[frame.next++]!;
        const at = onPath.get(target);
        if (at !== undefined) {
          circles.push([...path.slice(at), target].join(" → "));
        } else if (!done.has(target)) {
          onPath.set(target, path.length);
          path.push(target);
          stack.push({ node: target, next: 0 });
        }
        continue;
      }
      stack.pop();
      path.pop();
      onPath.delete(frame.node);
      done.add(frame.node);
    }
  }
  return circles;
}

/** Longest function, in lines from its header to its closing brace: past it a function is doing more than one thing. */
const functionLinesMax = 130;

/**
 * Functions allowed past functionLinesMax, each with the reason it is not
 * split yet. The test fails when one of them is back under the limit, so the
 * list only shrinks.
 */
const longFunctions: Record<string, string> = {};

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

  test("only the clock reads real time; the engine and protocol arm no timers, the server only its listed ones", () => {
    const violations: string[] = [];
    for (const file of files) {
      if (!timeRuleLayers.includes(layerOf(file.rel))) continue;
      const code = codeOnly(file.text);
      if (/\bDate\.now\(|\bperformance\.now\(/.test(code)) violations.push(`${file.rel} reads real time (use lib/clock.ts)`);
      const armsTimer = /\bset(Timeout|Interval|Immediate)\(/.test(code);
      const listed = serverTimers[file.rel] !== undefined;
      if (armsTimer && !listed) violations.push(`${file.rel} arms a timer`);
      if (!armsTimer && listed) violations.push(`${file.rel} arms no timer any more: take it off serverTimers`);
    }
    expect(violations).toEqual([]);
  });

  test("no mutable module state in engine, storage, server and lib: every top-level let or var is listed with its reason", () => {
    const found: string[] = [];
    for (const file of files) if (moduleStateLayers.includes(layerOf(file.rel))) found.push(...topLevelMutables(file.rel, codeOnly(file.text)));
    expect(found.filter((binding) => moduleStateAllowed[binding] === undefined)).toEqual([]);
    // A listed binding that is gone comes off the list.
    expect(Object.keys(moduleStateAllowed).filter((binding) => !found.includes(binding))).toEqual([]);
  });

  test("the module-state finder sees top-level let and var, exported or not, and nothing nested", () => {
    const code = ["let a = 1;", "export let b = 2;", "var c;", "function f() {", "  let d = 3;", "  for (let e = 0; e < 1; e++) {}", "}", "const g = 4;", "letter(5);"].join("\n");
    expect(topLevelMutables("x.ts", code)).toEqual(["x.ts a", "x.ts b", "x.ts c"]);
  });

  test("no import circles", () => {
    expect(importCircles(importGraph())).toEqual([]);
  });

  test("the circle finder finds a circle, with its path", () => {
    const graph = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts", "d.ts"]],
      ["d.ts", []],
    ]);
    expect(importCircles(graph)).toEqual(["a.ts → b.ts → c.ts → a.ts"]);
    expect(importCircles(new Map([["x.ts", ["x.ts"]]]))).toEqual(["x.ts → x.ts"]);
    const diamond = new Map([
      ["a.ts", ["b.ts", "c.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", []],
    ]);
    expect(importCircles(diamond)).toEqual([]);
  });

  test("the source reader leaves only code, so every file's braces pair", () => {
    const unpaired: string[] = [];
    for (const file of files) {
      let depth = 0;
      let lowest = 0;
      for (const c of codeOnly(file.text)) {
        if (c === "{") depth++;
        else if (c === "}") lowest = Math.min(lowest, --depth);
      }
      if (depth !== 0 || lowest < 0) unpaired.push(file.rel);
    }
    expect(unpaired).toEqual([]);
  });

  test("the function finder measures block bodies and skips other blocks", () => {
    const source = [
      "export function outer(a: number): { b: number } {",
      "  if (a > 1) {",
      '    const s = "{ not code";',
      "  }",
      "  const inner = (x: number) => {",
      "    return /[}]/.test(`${x}}`);",
      "  };",
      "  return { b: inner(a) ? 1 : 0 };",
      "}",
      "class K {",
      "  get size(): number {",
      "    return 0;",
      "  }",
      "}",
    ].join("\n");
    expect(functionSpans(source)).toEqual([
      { name: "outer", line: 1, lines: 9 },
      { name: "inner", line: 5, lines: 3 },
      { name: "size", line: 11, lines: 3 },
    ]);
  });

  test(`functions stay under ${functionLinesMax} lines, but the listed ones`, () => {
    const long: string[] = [];
    const stillLong = new Set<string>();
    for (const file of files) {
      for (const span of functionSpans(file.text)) {
        if (span.lines <= functionLinesMax) continue;
        const name = `${file.rel} ${span.name}`;
        if (longFunctions[name] !== undefined) stillLong.add(name);
        else long.push(`${file.rel}:${span.line} ${span.name}: ${span.lines} lines`);
      }
    }
    expect(long).toEqual([]);
    expect(Object.keys(longFunctions).filter((name) => !stillLong.has(name))).toEqual([]);
  });

  test("no empty catch blocks", () => {
    const violations = files
      .filter((file) => /catch\s*(\([^)]*\))?\s*\{\s*\}/.test(file.text))
      .map((file) => file.rel);
    expect(violations).toEqual([]);
  });
});
