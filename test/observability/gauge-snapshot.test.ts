// Goal: gaugeSnapshot reads the engine's stats shape (src/engine/reads/stats.ts):
// per-topic counts become orq_items entries,
// a namespace whose topic list was cut short gets a `_unlisted` remainder so
// sums stay exact, the store breaker passes through, and waiters come from the
// engine-wide total.

import { describe, expect, test } from "bun:test";
import { gaugeSnapshot, unlistedTopicLabel } from "../../src/observability/gauge-snapshot.ts";

const counts = (ready: number, leased = 0) => ({ ready, delayed: 0, waiting: 0, leased, dead: 0 });

describe("gaugeSnapshot", () => {
  test("per-topic counts, the store breaker, connections, waiters and paused topics", () => {
    const snapshot = gaugeSnapshot({
      engineStats: {
        namespaces: { shop: { ...counts(3, 1), topics: { a: counts(2, 1), b: counts(1) }, topicsTruncated: false, parkedWaiters: 2 } },
        engine: { parkedWaitersTotal: 2, pausedTopics: 3, prefetchKeysTotal: 7 },
      },
      breaker: "open",
      connections: 4,
      mapResidentBytes: 8192,
      recentValues: { hits: 5, misses: 2, bytes: 4096, ringBytes: 8192 },
    });
    expect(snapshot.pausedTopics).toBe(3);
    expect(snapshot.storeRead).toEqual({ mapResidentBytes: 8192, prefetchKeysTotal: 7, recentValues: { hits: 5, misses: 2, bytes: 4096, ringBytes: 8192 } });
    expect(snapshot.items.filter((i) => i.count > 0)).toEqual([
      { ns: "shop", topic: "a", state: "ready", count: 2 },
      { ns: "shop", topic: "a", state: "leased", count: 1 },
      { ns: "shop", topic: "b", state: "ready", count: 1 },
    ]);
    expect(snapshot.items.length).toBe(10);
    expect(snapshot.breaker).toBe("open");
    expect(snapshot.connections).toBe(4);
    expect(snapshot.waiters).toBe(2);
  });

  test("a truncated topic list gets the remainder under _unlisted", () => {
    const snapshot = gaugeSnapshot({
      engineStats: { namespaces: { shop: { ...counts(10), topics: { a: counts(4) }, topicsTruncated: true, parkedWaiters: 0 } } },
      breaker: "closed",
      connections: 0,
    });
    const ready = snapshot.items.filter((i) => i.state === "ready");
    expect(ready).toEqual([
      { ns: "shop", topic: "a", state: "ready", count: 4 },
      { ns: "shop", topic: unlistedTopicLabel, state: "ready", count: 6 },
    ]);
    expect(snapshot.waiters).toBe(0);
  });
});
