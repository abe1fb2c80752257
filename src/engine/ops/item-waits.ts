// Parked `wait` requests: each waits for a list of items to end. A wait is
// indexed by the key of every live item it awaits (keys are unique across
// shards: the store hands them out from one counter), so an ending item wakes
// only its own waits, and by its owner, so a closed connection drops them. A
// wait whose last item ended is answered once that end's commit settles (an
// answer does not tell of an end before it is durable), and with the items'
// states at that moment; a timeout or a shutdown answers with the
// states as they are. The bounds (itemWaitsPerConnectionMax,
// itemWaitsTotalMax) keep what a client can park small: one object, its id
// list and one index entry per awaited item.

import { assert } from "../../lib/assert.ts";
import type { ItemKey } from "../../storage/store.ts";
import type { WaitOutcome } from "../api.ts";
import { atWait } from "../failures/failure-location.ts";
import { fail } from "../failures/failures.ts";
import type { ItemStates } from "../state/item-states.ts";
import { Deadline, DeadlineKind } from "../time/deadlines.ts";
import type { EngineDeadlines } from "../time/engine-deadlines.ts";
import { ItemWait, type ItemStatesAnswer } from "./item-wait.ts";

/** How long a client refused for the server's total bound is told to wait (1 s), as a parked dequeue's is. */
const waitsFullRetryAfterMs = 1000;

export class ItemWaits {
  /** Item key -> the waits that await it. */
  private readonly byKey = new Map<ItemKey, Set<ItemWait>>();
  private readonly byOwner = new Map<number, Set<ItemWait>>();
  private count = 0;
  /** Waits answered since start (a counter for stats and /metrics). */
  answered = 0;

  constructor(
    private readonly states: ItemStates,
    private readonly deadlines: EngineDeadlines,
    /** The items' states now, as `get` answers them. */
    private readonly read: (ns: string, ids: readonly string[]) => ItemStatesAnswer,
  ) {}

  /** Waits parked now. */
  get total(): number {
    return this.count;
  }

  wait(ns: string, ids: readonly string[], waitMs: number, owner: number, nowMs: number): WaitOutcome {
    const keys = new Set<ItemKey>();
    for (const id of ids) {
      const item = this.states.items.get(id);
      if (item !== undefined && item.ns === ns) keys.add(item.key);
    }
    if (keys.size === 0 || waitMs <= 0) {
      this.answered++;
      return { ok: true, kind: "done", items: this.read(ns, ids) };
    }
    const limits = this.states.limits;
    if ((this.byOwner.get(owner)?.size ?? 0) >= limits.itemWaitsPerConnectionMax) {
      return fail("over_limit", `this connection already has ${limits.itemWaitsPerConnectionMax} parked waits (item_waits_per_connection_max)`, { at: atWait });
    }
    if (this.count >= limits.itemWaitsTotalMax) {
      return fail("server_full", `the server already holds ${limits.itemWaitsTotalMax} parked waits (item_waits_total_max)`, { retryAfterMs: waitsFullRetryAfterMs });
    }
    return { ok: true, kind: "parked", waiter: this.park(ns, [...ids], keys, waitMs, owner, nowMs) };
  }

  /** A parked wait's wait_ms passed: it answers with the states now. */
  timeOut(wait: ItemWait): void {
    wait.timeoutNode = null;
    this.settle(wait);
  }

  /** A connection closed: its waits are dropped (their answers go nowhere). */
  cancelOwner(owner: number): void {
    const owned = this.byOwner.get(owner);
    if (owned === undefined) return;
    for (const wait of [...owned]) this.settle(wait);
  }

  /** Cluster mode: these items' shard moved away; each wait on one of them answers now with what it has. */
  releaseKeys(keys: Iterable<ItemKey>): void {
    if (this.count === 0) return;
    for (const key of keys) {
      const waits = this.byKey.get(key);
      if (waits !== undefined) for (const wait of [...waits]) this.settle(wait);
    }
  }

  /** Shutdown: every parked wait answers now with what it has. */
  releaseAll(): void {
    for (const owned of [...this.byOwner.values()]) for (const wait of [...owned]) this.settle(wait);
  }

  checkInvariants(): void {
    let owned = 0;
    for (const set of this.byOwner.values()) owned += set.size;
    assert(owned === this.count, `item waits: counted ${this.count}, owners hold ${owned}`);
    for (const [key, set] of this.byKey) {
      assert(set.size > 0, "item waits: an empty key entry");
      for (const wait of set) assert(!wait.settled && wait.keys.has(key), "item waits: a key indexes a wait that does not await it");
    }
  }

  private park(ns: string, ids: string[], keys: Set<ItemKey>, waitMs: number, owner: number, nowMs: number): Promise<ItemStatesAnswer> {
    let resolve: (items: ItemStatesAnswer) => void = () => assert(false, "engine: wait resolved before its promise existed");
    const promise = new Promise<ItemStatesAnswer>((r) => {
      resolve = r;
    });
    const wait = new ItemWait(owner, ns, ids, keys, resolve);
    wait.timeoutNode = this.deadlines.schedule(new Deadline(nowMs + waitMs, DeadlineKind.ItemWaitTimeout, wait));
    for (const key of keys) {
      let set = this.byKey.get(key);
      if (set === undefined) {
        set = new Set();
        this.byKey.set(key, set);
      }
      set.add(wait);
    }
    let owned = this.byOwner.get(owner);
    if (owned === undefined) {
      owned = new Set();
      this.byOwner.set(owner, owned);
    }
    owned.add(wait);
    this.count++;
    // Only while a wait is parked does an ending item call here: the ack path pays nothing otherwise.
    this.states.listenToEnds(this.ended);
    return promise;
  }

  /** An item ended (ItemStates.endItem): each wait it completes answers once the end's commit settles. */
  private readonly ended = (key: ItemKey): void => {
    const waits = this.byKey.get(key);
    if (waits === undefined) return;
    this.byKey.delete(key);
    for (const wait of waits) {
      wait.keys.delete(key);
      if (wait.keys.size === 0) this.states.afterCommit(() => this.settle(wait));
    }
  };

  private settle(wait: ItemWait): void {
    if (wait.settled) return;
    wait.settled = true;
    if (wait.timeoutNode !== null) {
      this.deadlines.cancel(wait.timeoutNode);
      wait.timeoutNode = null;
    }
    for (const key of wait.keys) {
      const set = this.byKey.get(key);
      if (set === undefined) continue;
      set.delete(wait);
      if (set.size === 0) this.byKey.delete(key);
    }
    const owned = this.byOwner.get(wait.owner) as Set<ItemWait>;
    owned.delete(wait);
    if (owned.size === 0) this.byOwner.delete(wait.owner);
    this.count--;
    if (this.count === 0) this.states.listenToEnds(null);
    this.answered++;
    wait.resolve(this.read(wait.ns, wait.ids));
  }
}
