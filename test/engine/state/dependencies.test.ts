// Goal: the DependencyGraph releases waiting items exactly when their last
// dependency is acked, kills the whole cascade (each item once, with the
// dead_reason naming its own dependency) when a dependency fails, handles
// removal, chains and diamonds, keeps its invariants through a seeded random
// run, and classifyAfter() sorts `after` lists as the contract says.

import { describe, expect, test } from "bun:test";
import { AssertionError } from "../../../src/lib/assert.ts";
import { classifyAfter, DependencyGraph, type DependencyStatus } from "../../../src/engine/state/dependencies.ts";
import { seededRandom } from "../../support/seeded-random.ts";

const afterIdsMax = 100;

describe("classifyAfter", () => {
  const statuses: Record<string, DependencyStatus> = {
    a: "acked",
    l: "live",
    l2: "live",
    d: "dead",
    c: "cancelled",
    e: "expired",
  };
  const lookup = (id: string): DependencyStatus => statuses[id] ?? "unknown";

  test("no after, or only acked ids: ready", () => {
    expect(classifyAfter(null, lookup, afterIdsMax)).toEqual({ kind: "ready" });
    expect(classifyAfter([], lookup, afterIdsMax)).toEqual({ kind: "ready" });
    expect(classifyAfter(["a", "a"], lookup, afterIdsMax)).toEqual({ kind: "ready" });
  });
  test("live ids: waiting, deduplicated, in first-seen order", () => {
    expect(classifyAfter(["l2", "a", "l", "l2"], lookup, afterIdsMax)).toEqual({ kind: "waiting", unmet: ["l2", "l"] });
  });
  test("a failed id makes the item dead at once, naming the first failed id", () => {
    expect(classifyAfter(["l", "c", "d"], lookup, afterIdsMax)).toEqual({ kind: "dead", deadReason: "dependency c cancelled" });
    expect(classifyAfter(["e"], lookup, afterIdsMax)).toEqual({ kind: "dead", deadReason: "dependency e expired" });
    expect(classifyAfter(["a", "d"], lookup, afterIdsMax)).toEqual({ kind: "dead", deadReason: "dependency d dead" });
  });
  test("an unknown id is NOT_FOUND with its index, even after a failed one", () => {
    expect(classifyAfter(["l", "d", "zz"], lookup, afterIdsMax)).toEqual({ kind: "not_found", index: 2 });
  });
  test("after a restart an unknown id counts as acked and forgotten", () => {
    expect(classifyAfter(["zz", "l"], lookup, afterIdsMax, { unknownIsSatisfied: true })).toEqual({
      kind: "waiting",
      unmet: ["l"],
    });
  });
  test("count at limit-1, limit, limit+1 (repeats counted as sent)", () => {
    expect(classifyAfter(["a", "a"], lookup, 3).kind).toBe("ready");
    expect(classifyAfter(["a", "a", "a"], lookup, 3).kind).toBe("ready");
    expect(classifyAfter(["a", "a", "a", "a"], lookup, 3)).toEqual({ kind: "too_large" });
  });
  test("a ready answer is one shared, frozen object (no allocation per enqueued item); others are fresh", () => {
    const ready = classifyAfter(null, lookup, afterIdsMax);
    expect(classifyAfter([], lookup, afterIdsMax)).toBe(ready);
    expect(classifyAfter(["a"], lookup, afterIdsMax)).toBe(ready);
    expect(classifyAfter(["zz"], lookup, afterIdsMax, { unknownIsSatisfied: true })).toBe(ready);
    expect(Object.isFrozen(ready)).toBe(true);
    const waiting = classifyAfter(["l"], lookup, afterIdsMax);
    expect(waiting).not.toBe(classifyAfter(["l"], lookup, afterIdsMax));
    expect(waiting).toEqual({ kind: "waiting", unmet: ["l"] });
  });
});

describe("DependencyGraph", () => {
  test("an item becomes ready only when its last dependency is acked", () => {
    const graph = new DependencyGraph(afterIdsMax);
    graph.addWaiting("x", ["a", "b", "a"]);
    expect(graph.unmetOf("x")).toEqual(["a", "b"]);
    expect(graph.edgeCount).toBe(2);
    expect(graph.onAcked("a")).toEqual([]);
    expect(graph.onAcked("a")).toEqual([]);
    expect(graph.unmetOf("x")).toEqual(["b"]);
    expect(graph.onAcked("b")).toEqual(["x"]);
    expect(graph.isWaiting("x")).toBe(false);
    expect(graph.unmetOf("x")).toBeNull();
    expect(graph.waitingCount).toBe(0);
    graph.checkInvariants();
  });
  test("a chain releases one link at a time", () => {
    const graph = new DependencyGraph(afterIdsMax);
    graph.addWaiting("b", ["a"]);
    graph.addWaiting("c", ["b"]);
    graph.addWaiting("d", ["c"]);
    expect(graph.onAcked("a")).toEqual(["b"]);
    expect(graph.onAcked("b")).toEqual(["c"]);
    expect(graph.onAcked("c")).toEqual(["d"]);
    expect(graph.waitingCount).toBe(0);
    graph.checkInvariants();
  });
  test("a diamond releases the join once both sides are acked", () => {
    const graph = new DependencyGraph(afterIdsMax);
    graph.addWaiting("left", ["top"]);
    graph.addWaiting("right", ["top"]);
    graph.addWaiting("join", ["left", "right"]);
    expect(graph.onAcked("top")).toEqual(["left", "right"]);
    expect(graph.onAcked("left")).toEqual([]);
    expect(graph.onAcked("right")).toEqual(["join"]);
    graph.checkInvariants();
  });
  test("a failure kills the whole cascade, each item once, reasons naming the direct dependency", () => {
    const graph = new DependencyGraph(afterIdsMax);
    graph.addWaiting("left", ["top"]);
    graph.addWaiting("right", ["top"]);
    graph.addWaiting("join", ["left", "right", "other"]);
    graph.addWaiting("tail", ["join"]);
    graph.addWaiting("bystander", ["other"]);
    const killed = graph.onFailed("top", "cancelled");
    expect(killed).toEqual([
      { itemId: "left", deadReason: "dependency top cancelled" },
      { itemId: "right", deadReason: "dependency top cancelled" },
      { itemId: "join", deadReason: "dependency left dead" },
      { itemId: "tail", deadReason: "dependency join dead" },
    ]);
    expect(graph.waitingCount).toBe(1);
    expect(graph.unmetOf("bystander")).toEqual(["other"]);
    expect(graph.dependentsOf("other")).toEqual(["bystander"]);
    // The engine may report the cascaded items as failed too: nothing more happens.
    expect(graph.onFailed("join", "dead")).toEqual([]);
    expect(graph.onFailed("top", "cancelled")).toEqual([]);
    graph.checkInvariants();
  });
  test("a waiting item that fails itself stops waiting and takes its dependents", () => {
    const graph = new DependencyGraph(afterIdsMax);
    graph.addWaiting("w", ["a"]);
    graph.addWaiting("x", ["w"]);
    expect(graph.onFailed("w", "expired")).toEqual([{ itemId: "x", deadReason: "dependency w expired" }]);
    expect(graph.isWaiting("w")).toBe(false);
    expect(graph.dependentsOf("a")).toEqual([]);
    expect(graph.edgeCount).toBe(0);
    graph.checkInvariants();
  });
  test("remove drops only the item's own edges", () => {
    const graph = new DependencyGraph(afterIdsMax);
    graph.addWaiting("w", ["a", "b"]);
    graph.addWaiting("x", ["w", "b"]);
    graph.remove("w");
    graph.remove("w");
    graph.remove("never");
    expect(graph.dependentsOf("a")).toEqual([]);
    expect(graph.dependentsOf("b")).toEqual(["x"]);
    expect(graph.unmetOf("x")).toEqual(["w", "b"]);
    graph.checkInvariants();
  });
  test("programmer errors are assertions", () => {
    const graph = new DependencyGraph(2);
    graph.addWaiting("x", ["a"]);
    expect(() => graph.addWaiting("x", ["b"])).toThrow(AssertionError);
    expect(() => graph.addWaiting("y", [])).toThrow(AssertionError);
    expect(() => graph.addWaiting("z", ["z"])).toThrow(AssertionError);
    expect(() => graph.addWaiting("v", ["a", "b", "c"])).toThrow(AssertionError);
    graph.addWaiting("u", ["a", "b"]);
    graph.checkInvariants();
  });
  test("a failure cascade 60,000 items deep needs no recursion", () => {
    const graph = new DependencyGraph(afterIdsMax);
    const depth = 60_000;
    for (let i = 1; i <= depth; i++) graph.addWaiting(`n${i}`, [`n${i - 1}`]);
    const killed = graph.onFailed("n0", "dead");
    expect(killed.length).toBe(depth);
    expect(killed[depth - 1]).toEqual({ itemId: `n${depth}`, deadReason: `dependency n${depth - 1} dead` });
    expect(graph.waitingCount).toBe(0);
    graph.checkInvariants();
  });

  test("seeded random run agrees with a simple model", () => {
    const random = seededRandom(1234);
    const graph = new DependencyGraph(5);
    // Model: item -> set of unmet deps; items ever created, and those ended or dead.
    const model = new Map<string, Set<string>>();
    const items: string[] = [];
    const gone = new Set<string>();
    let next = 0;
    for (let step = 0; step < 5000; step++) {
      const roll = random();
      const pickLive = (): string | undefined => {
        const live = items.filter((id) => !gone.has(id));
        return live[Math.floor(random() * live.length)];
      };
      if (roll < 0.45 || items.length < 5) {
        const id = `i${next++}`;
        const deps = new Set<string>();
        const count = Math.floor(random() * 4);
        for (let i = 0; i < count; i++) {
          const dep = pickLive();
          if (dep !== undefined) deps.add(dep);
        }
        items.push(id);
        if (deps.size > 0) {
          graph.addWaiting(id, [...deps]);
          model.set(id, deps);
        }
      } else if (roll < 0.8) {
        const dep = pickLive();
        if (dep === undefined || model.has(dep)) continue; // a waiting item cannot be delivered, so not acked
        gone.add(dep);
        const expected: string[] = [];
        for (const [id, deps] of model) {
          if (deps.delete(dep) && deps.size === 0) expected.push(id);
        }
        for (const id of expected) model.delete(id);
        expect(graph.onAcked(dep).sort()).toEqual(expected.sort());
      } else {
        const dep = pickLive();
        if (dep === undefined) continue;
        gone.add(dep);
        model.delete(dep);
        // Model the cascade by fixpoint.
        const dead = new Set<string>([dep]);
        const expected: string[] = [];
        for (let changed = true; changed; ) {
          changed = false;
          for (const [id, deps] of model) {
            if ([...deps].some((d) => dead.has(d))) {
              dead.add(id);
              gone.add(id);
              model.delete(id);
              expected.push(id);
              changed = true;
            }
          }
        }
        const killed = graph.onFailed(dep, "cancelled").map((k) => k.itemId);
        expect(killed.sort()).toEqual(expected.sort());
      }
      if (step % 250 === 0) graph.checkInvariants();
      expect(graph.waitingCount).toBe(model.size);
    }
    graph.checkInvariants();
  });
});
