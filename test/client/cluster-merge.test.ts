// Goal: what the cluster client merges from several nodes comes out right:
// dead letters from the nodes in turn within the limit, `list` cursors that
// round-trip and refuse strings this client did not make, list order as one
// node gives it, and `stats` replies summed (counts added, clocks the largest,
// flags or'ed, requirement sets combined, distinct topics counted once).

import { describe, expect, test } from "bun:test";
import { decodeListCursor, encodeListCursor, interleaveDead, listOrder, sumStats } from "../../src/client/cluster-merge.ts";
import type { ItemState } from "../../src/client/types.ts";

function item(id: string, extra: Partial<ItemState> = {}): ItemState {
  return { id, topic: "t", state: "dead", priority: 0, payload: new Uint8Array(), metadata: new Uint8Array(), attempt: 1, deliverAtMs: 0, enqueuedAtMs: 0, ...extra };
}

describe("cluster merges", () => {
  test("dead letters come from the nodes in turn, each node's in its order, up to the limit", () => {
    const lists = [[item("a1"), item("a2"), item("a3")], [item("b1")], [], [item("c1"), item("c2")]];
    expect(interleaveDead(lists, 100).map((i) => i.id)).toEqual(["a1", "b1", "c1", "a2", "c2", "a3"]);
    expect(interleaveDead(lists, 4).map((i) => i.id)).toEqual(["a1", "b1", "c1", "a2"]);
    expect(interleaveDead([[], []], 10)).toEqual([]);
  });

  test("a list cursor round-trips; other strings are not one", () => {
    const cursor = { "127.0.0.1:1": "r.0.5.7", "127.0.0.1:2": "done" };
    expect(decodeListCursor(encodeListCursor(cursor))).toEqual(cursor);
    expect(decodeListCursor("r.0.5.7")).toBeNull();
    expect(decodeListCursor("c1.!!!")).toBeNull();
    expect(decodeListCursor(`c1.${Buffer.from(JSON.stringify({ a: 1 })).toString("base64url")}`)).toBeNull();
  });

  test("list order: ready first by priority and due time, the rest by enqueue time", () => {
    const items = [
      item("late", { state: "delayed", enqueuedAtMs: 9 }),
      item("low", { state: "ready", priority: 5, enqueuedAtMs: 1 }),
      item("early", { state: "leased", enqueuedAtMs: 2 }),
      item("high", { state: "ready", priority: -1, deliverAtMs: 7 }),
      item("high-sooner", { state: "ready", priority: -1, deliverAtMs: 3 }),
    ];
    expect(items.sort(listOrder).map((i) => i.id)).toEqual(["high-sooner", "high", "low", "early", "late"]);
  });

  test("stats replies are summed", () => {
    const signature = (requires: unknown, items: number) => ({ requires, items });
    const node = (ready: number, uptime: number, topics: Record<string, unknown>, signatures: unknown[]) => ({
      now_ms: 100 + uptime,
      totals: { ready, dead: 1, topics: Object.keys(topics).length },
      counters: { enqueued: ready },
      namespaces: {
        ns: {
          ready,
          topic_count: Object.keys(topics).length,
          topics_truncated: false,
          quota: { enqueue_per_minute: 60 },
          topics: Object.fromEntries(Object.entries(topics).map(([name, n]) => [name, { ready: n, unmatchable: { asked: uptime > 5, askers: uptime, items: 1, signatures, signatures_truncated: false } }])),
        },
      },
      server: { connections: 2, uptime_ms: uptime },
    });
    const merged = sumStats([node(3, 10, { a: 1, b: 2 }, [signature({ gpu: true }, 1)]), node(4, 5, { b: 4 }, [signature({ gpu: true }, 2), signature({ os: "x" }, 9)])]);
    expect(merged.totals).toEqual({ ready: 7, dead: 2, topics: 2 });
    expect(merged.counters).toEqual({ enqueued: 7 });
    expect(merged.server).toEqual({ connections: 4, uptime_ms: 10 });
    expect(merged.now_ms).toBe(110);
    const ns = (merged.namespaces as Record<string, Record<string, unknown>>).ns!;
    expect(ns.topic_count).toBe(2);
    expect(ns.quota).toEqual({ enqueue_per_minute: 60 });
    const b = (ns.topics as Record<string, { ready: number; unmatchable: Record<string, unknown> }>).b!;
    expect(b.ready).toBe(6);
    expect(b.unmatchable).toEqual({ asked: true, askers: 10, items: 2, signatures: [signature({ os: "x" }, 9), signature({ gpu: true }, 3)], signatures_truncated: false });
  });
});
