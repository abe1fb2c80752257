// The `after` dependency graph: which waiting items still wait for which
// dependencies, across every shard (an edge is two item id strings, so it
// does not care where either item lives). The engine owns item states; this
// file only answers "who became ready" and "who must become a dead letter".
//
// How the engine uses it:
// - At enqueue, classifyAfter() sorts an item's `after` ids with lookups the
//   engine passes in: unknown / dead at once / ready / waiting on the unmet
//   ids. A waiting item goes in with addWaiting(itemId, unmet).
// - A dependency is acked: onAcked(depId) returns the items that now have no
//   unmet dependency (ready, in the order they started waiting).
// - A dependency ends another way (cancelled, expired) or becomes a dead
//   letter: onFailed(depId, "cancelled" | "expired" | "dead") returns the
//   whole cascade at once: the dependents, their dependents (they became dead
//   letters too), and so on, each with its dead_reason naming the dependency
//   that killed it ("dependency 3:17 cancelled", "dependency 3:20 dead"). The
//   graph has already dropped them; calling onFailed again for an item in the
//   cascade is harmless (it returns nothing). The walk is a work list, not
//   recursion, and visits each item once.
// - A waiting item is cancelled or expires itself: onFailed(itemId, reason)
//   drops its own edges too and returns the items waiting on it. remove(itemId)
//   drops only its own edges (for an item that leaves waiting some other way).
// - After a restart the engine rebuilds the graph from stored items with
//   classifyAfter(..., { unknownIsSatisfied: true }): a dependency the server
//   no longer knows was acked and forgotten (had it failed, the waiting item
//   would have been stored dead).
//
// Ids cannot form cycles: an `after` id must exist before the item naming it.

import { assert } from "../../lib/assert.ts";

/** How a dependency stands when an item naming it in `after` is enqueued. */
export type DependencyStatus = "acked" | "live" | "dead" | "cancelled" | "expired" | "unknown";

export type AfterClassification =
  /** No unmet dependency (or no `after` at all): the item is ready (or delayed). */
  | { kind: "ready" }
  /** Some dependency is live: the item waits for these ids (deduplicated, in first-seen order). */
  | { kind: "waiting"; unmet: string[] }
  /** A dependency already failed: the item is stored as a dead letter at once. */
  | { kind: "dead"; deadReason: string }
  /** An id the server does not know (or from another namespace): the enqueue fails with unknown_dependency. */
  | { kind: "not_found"; index: number }
  /** More ids than afterIdsMax: the enqueue fails with over_limit. */
  | { kind: "too_large" };

/**
 * The answer for the common item with no `after` (or all met), and the
 * default options: shared, so classifying an item allocates nothing unless
 * it has dependencies (otherwise two objects per enqueued item).
 */
const readyClassification: AfterClassification = Object.freeze({ kind: "ready" });
const noClassifyOptions: { unknownIsSatisfied?: boolean } = Object.freeze({});

/** The dead_reason of an item killed by dependency `depId`, e.g. "dependency 3:17 cancelled". */
function dependencyDeadReason(depId: string, how: "cancelled" | "expired" | "dead"): string {
  return `dependency ${depId} ${how}`;
}

/**
 * Classifies an `after` list. An unknown id wins over a failed dependency (the
 * enqueue fails rather than storing a dead letter), and the first failed id in
 * list order names the dead reason. Repeated ids count once.
 */
export function classifyAfter(
  after: readonly string[] | null,
  lookup: (id: string) => DependencyStatus,
  afterIdsMax: number,
  options: { unknownIsSatisfied?: boolean } = noClassifyOptions,
): AfterClassification {
  if (after === null || after.length === 0) return readyClassification;
  if (after.length > afterIdsMax) return { kind: "too_large" };
  const seen = new Set<string>();
  const unmet: string[] = [];
  let deadReason: string | null = null;
  for (let index = 0; index < after.length; index++) {
    const id = after[index] as string;
    if (seen.has(id)) continue;
    seen.add(id);
    const status = lookup(id);
    switch (status) {
      case "acked":
        break;
      case "live":
        unmet.push(id);
        break;
      case "dead":
      case "cancelled":
      case "expired":
        deadReason ??= dependencyDeadReason(id, status);
        break;
      case "unknown":
        if (options.unknownIsSatisfied !== true) return { kind: "not_found", index };
        break;
    }
  }
  if (deadReason !== null) return { kind: "dead", deadReason };
  if (unmet.length > 0) return { kind: "waiting", unmet };
  return readyClassification;
}

/** What others may read of the dependency graph (ItemStates.graph): who waits on what, and counts. */
export type ReadonlyDependencyGraph = Pick<DependencyGraph, "waitingCount" | "edgeCount" | "isWaiting" | "unmetOf" | "dependencyIds" | "dependentsOf" | "checkInvariants">;

export class DependencyGraph {
  /** Waiting item -> dependencies not yet acked. Never empty: an item with none is not waiting. */
  private readonly unmetByItem = new Map<string, Set<string>>();
  /** Dependency -> items waiting on it. Never empty. */
  private readonly dependentsByDep = new Map<string, Set<string>>();
  private edges = 0;

  constructor(private readonly afterIdsMax: number) {
    assert(afterIdsMax >= 1, "afterIdsMax must be at least 1");
  }

  get waitingCount(): number {
    return this.unmetByItem.size;
  }

  get edgeCount(): number {
    return this.edges;
  }

  isWaiting(itemId: string): boolean {
    return this.unmetByItem.has(itemId);
  }

  /** The dependencies `itemId` still waits for, or null when it is not waiting. */
  unmetOf(itemId: string): string[] | null {
    const unmet = this.unmetByItem.get(itemId);
    return unmet === undefined ? null : [...unmet];
  }

  /** Every id some item waits on (cluster mode polls the ones on other nodes' shards). */
  dependencyIds(): IterableIterator<string> {
    return this.dependentsByDep.keys();
  }

  /** The items waiting on `depId`. */
  dependentsOf(depId: string): string[] {
    const dependents = this.dependentsByDep.get(depId);
    return dependents === undefined ? [] : [...dependents];
  }

  /** Records a waiting item; `unmet` is non-empty (repeats count once) and within afterIdsMax. */
  addWaiting(itemId: string, unmet: readonly string[]): void {
    assert(!this.unmetByItem.has(itemId), `item ${itemId} is already waiting`);
    assert(unmet.length > 0, `item ${itemId} waits on nothing`);
    assert(unmet.length <= this.afterIdsMax, `item ${itemId} waits on more than afterIdsMax ids`);
    const set = new Set<string>();
    for (const depId of unmet) {
      assert(depId !== itemId, `item ${itemId} waits on itself`);
      if (set.has(depId)) continue;
      set.add(depId);
      let dependents = this.dependentsByDep.get(depId);
      if (dependents === undefined) {
        dependents = new Set();
        this.dependentsByDep.set(depId, dependents);
      }
      dependents.add(itemId);
      this.edges++;
    }
    this.unmetByItem.set(itemId, set);
  }

  /** `depId` was acked: returns the items that wait on nothing any more (now ready), dropped from the graph. */
  onAcked(depId: string): string[] {
    const dependents = this.dependentsByDep.get(depId);
    if (dependents === undefined) return [];
    this.dependentsByDep.delete(depId);
    const ready: string[] = [];
    for (const itemId of dependents) {
      const unmet = this.unmetByItem.get(itemId);
      assert(unmet !== undefined && unmet.delete(depId), `edge ${itemId} -> ${depId} is one-sided`);
      this.edges--;
      if (unmet.size === 0) {
        this.unmetByItem.delete(itemId);
        ready.push(itemId);
      }
    }
    return ready;
  }

  /**
   * `depId` ended without ack or became a dead letter: returns every item that
   * must become a dead letter because of it, directly or through a chain,
   * each once, with its dead_reason. All of them are dropped from the graph.
   */
  onFailed(depId: string, how: "cancelled" | "expired" | "dead"): Array<{ itemId: string; deadReason: string }> {
    // A waiting item that fails (cancelled or expired while waiting) stops waiting itself.
    this.remove(depId);
    const killed: Array<{ itemId: string; deadReason: string }> = [];
    const failedDeps: string[] = [depId];
    const reasons: string[] = [how];
    for (let next = 0; next < failedDeps.length; next++) {
      const failed = failedDeps[next] as string;
      const dependents = this.dependentsByDep.get(failed);
      if (dependents === undefined) continue;
      const deadReason = dependencyDeadReason(failed, reasons[next] as "cancelled" | "expired" | "dead");
      // Copy first: remove() edits the set being walked.
      for (const itemId of [...dependents]) {
        this.remove(itemId);
        killed.push({ itemId, deadReason });
        // The item is now a dead letter, so whatever waits on it fails in turn.
        failedDeps.push(itemId);
        reasons.push("dead");
      }
    }
    return killed;
  }

  /** Drops a waiting item and its edges (it was cancelled, expired, or otherwise stopped waiting). No-op if absent. */
  remove(itemId: string): void {
    const unmet = this.unmetByItem.get(itemId);
    if (unmet === undefined) return;
    this.unmetByItem.delete(itemId);
    for (const depId of unmet) {
      const dependents = this.dependentsByDep.get(depId);
      assert(dependents !== undefined && dependents.delete(itemId), `edge ${itemId} -> ${depId} is one-sided`);
      if (dependents.size === 0) this.dependentsByDep.delete(depId);
      this.edges--;
    }
  }

  checkInvariants(): void {
    let forward = 0;
    for (const [itemId, unmet] of this.unmetByItem) {
      assert(unmet.size > 0, `waiting item ${itemId} waits on nothing`);
      assert(unmet.size <= this.afterIdsMax, `waiting item ${itemId} over afterIdsMax`);
      for (const depId of unmet) {
        assert(this.dependentsByDep.get(depId)?.has(itemId) === true, `edge ${itemId} -> ${depId} is one-sided`);
        forward++;
      }
    }
    let backward = 0;
    for (const [depId, dependents] of this.dependentsByDep) {
      assert(dependents.size > 0, `dependency ${depId} has an empty dependents set`);
      for (const itemId of dependents) {
        assert(this.unmetByItem.get(itemId)?.has(depId) === true, `edge ${itemId} -> ${depId} is one-sided`);
        backward++;
      }
    }
    assert(forward === backward && forward === this.edges, "edge count is wrong");
  }
}
