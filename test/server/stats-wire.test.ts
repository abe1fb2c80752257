// Goal: the `stats` reply's exact wire shape (docs/PROTOCOL.md, `stats`): a
// real engine with items in every state, a quota, a pause, a parked dequeue and
// an unmatchable signature, through the real stats op, for every namespace, for
// one namespace (`ns`) and for a token scoped to some. The expected replies are
// written in wire order and compared as encoded MessagePack, so a renamed,
// dropped, added or reordered field fails here. Namespace, topic and feature
// names are chosen in camelCase to show they pass through untouched.

import { describe, expect, test } from "bun:test";
import { createEncoder } from "../../src/protocol/msgpack-codec.ts";
import type { NamespaceScope } from "../../src/server/auth.ts";
import { allNamespaces } from "../../src/server/auth.ts";
import type { OpContext } from "../../src/server/op-types.ts";
import { opTable } from "../../src/server/op-table.ts";
import { statsToWire } from "../../src/server/ops/stats.ts";
import { dequeued, Harness, item } from "../engine/support/harness.ts";
import { makeOpContext } from "../support/op-context.ts";

const serverGauges = { connections: 2, requests_in_flight: 1, output_bytes_unsent: 0, uptime_ms: 5000 };

/** A server with: billing (quota) holding ready, delayed, waiting, leased, dead and unmatchable items; opsTeam with a paused topic and a parked dequeue. */
async function populated(): Promise<Harness> {
  const h = new Harness({ namespaces: { billing: { enqueuePerMinute: 100 } } });
  const [first] = await h.enqueue("billing", [item("invoiceRuns"), item("invoiceRuns", { requires: { gpuModel: "a100" } }), item("invoiceRuns", { delayMs: 60_000 })]);
  await h.enqueue("billing", [item("invoiceRuns", { after: [first!] }), item("dead_letters", { maxAttempts: 1 })]);
  // A t4 worker takes the item without requirements (leased); the a100 one stays ready and unmatchable.
  expect((await h.dequeue("billing", [["invoiceRuns", 1]], { capabilities: { gpuModel: "t4" } })).length).toBe(1);
  const [doomed] = await h.dequeue("billing", [["dead_letters", 1]]);
  await h.settle(h.engine.nack("billing", [{ receipt: doomed!.receipt, delayMs: null, metadata: null }], h.now));
  await h.enqueue("opsTeam", [item("nightlyBuild")]);
  await h.settle(h.engine.pause("opsTeam", "nightlyBuild", null, h.now));
  dequeued(h.engine.dequeue("opsTeam", { topics: [{ topic: "idle", count: 1 }], capabilities: null, waitMs: 1000, leaseMs: null, owner: 7 }, h.now));
  return h;
}

function statsReply(h: Harness, ns: string | null, scope: NamespaceScope): Record<string, unknown> {
  const ctx: OpContext = { ...makeOpContext({ scope }), engine: h.engine, nowMs: h.now, serverStats: () => ({ ...serverGauges }) };
  const outcome = opTable.stats.handle({}, ns, ctx);
  if (outcome.kind !== "reply") throw new Error(`stats answered ${outcome.kind}`);
  return outcome.value;
}

const unasked = { asked: false, askers: 0, items: 0, signatures: [], signatures_truncated: false };

const billing = {
  ready: 1, delayed: 1, waiting: 1, leased: 1, dead: 1, topic_count: 2,
  topics: {
    dead_letters: { ready: 0, delayed: 0, waiting: 0, leased: 0, dead: 1, unmatchable: { asked: true, askers: 1, items: 0, signatures: [], signatures_truncated: false } },
    invoiceRuns: {
      ready: 1, delayed: 1, waiting: 1, leased: 1, dead: 0,
      unmatchable: { asked: true, askers: 1, items: 1, signatures: [{ requires: { gpuModel: "a100" }, items: 1 }], signatures_truncated: false },
    },
  },
  topics_truncated: false, unmatchable: 1, parked_waiters: 0,
  counters: { enqueued: 5, delivered: 2, acked: 0, nacked: 1, expired: 0, cancelled: 0, dead: 1, redriven: 0 },
  quota: { enqueue_per_minute: 100, available: 95 },
};

const opsTeam = {
  ready: 1, delayed: 0, waiting: 0, leased: 0, dead: 0, topic_count: 1,
  topics: { nightlyBuild: { ready: 1, delayed: 0, waiting: 0, leased: 0, dead: 0, unmatchable: unasked } },
  topics_truncated: false, unmatchable: 0, parked_waiters: 1,
  counters: { enqueued: 1, delivered: 0, acked: 0, nacked: 0, expired: 0, cancelled: 0, dead: 0, redriven: 0 },
  quota: null,
};

/** Equal values and the same keys in the same order: the encoded bytes match. */
function expectWire(actual: Record<string, unknown>, expected: Record<string, unknown>): void {
  expect(actual).toEqual(expected);
  const encoder = createEncoder();
  expect(Buffer.from(encoder.encode(actual)).toString("hex")).toBe(Buffer.from(encoder.encode(expected)).toString("hex"));
}

describe("stats on the wire", () => {
  test("every namespace: totals, counters, each namespace and topic, engine gauges, server gauges", async () => {
    const h = await populated();
    expectWire(statsReply(h, null, allNamespaces), {
      now_ms: h.now,
      totals: { ready: 2, delayed: 1, waiting: 1, leased: 1, dead: 1, topics: 3, parked_waiters: 1 },
      counters: { enqueued: 6, delivered: 2, acked: 0, nacked: 1, expired: 0, cancelled: 0, dead: 1, redriven: 0 },
      namespaces: { billing, opsTeam },
      engine: {
        items: 6, topics: 3, namespaces: 2, outcomes_retained: 0, results_retained: 0, results_retained_bytes: 0, item_waits_parked: 0, item_waits_answered_total: 0, deadlines: 4, dependency_edges: 1, signatures: 1, worker_kinds: 2,
        background_write_failures: 0, enqueue_rollbacks: 0, paused_topics: 1, parked_waiters_total: 1,
        passed_over: { topic_paused: 0, topic_max_leased: 0, topic_rate: 0, group_max_leased: 0, group_rate: 0 },
        preference_deliveries: { full: 0, partial: 0, released: 0 },
      },
      server: serverGauges,
    });
    h.engine.releaseWaiters();
  });

  test("one namespace (`ns`): that namespace only, and no engine gauges", async () => {
    const h = await populated();
    expectWire(statsReply(h, "billing", allNamespaces), {
      now_ms: h.now,
      totals: { ready: 1, delayed: 1, waiting: 1, leased: 1, dead: 1, topics: 2, parked_waiters: 0 },
      counters: billing.counters,
      namespaces: { billing },
      server: serverGauges,
    });
    h.engine.releaseWaiters();
  });

  test("a scoped token: the namespaces it may see that exist, and no engine gauges", async () => {
    const h = await populated();
    expectWire(statsReply(h, null, { all: false, namespaces: new Set(["opsTeam", "nobody"]) }), {
      now_ms: h.now,
      totals: { ready: 1, delayed: 0, waiting: 0, leased: 0, dead: 0, topics: 1, parked_waiters: 1 },
      counters: opsTeam.counters,
      namespaces: { opsTeam },
      server: serverGauges,
    });
    h.engine.releaseWaiters();
  });

  test("requires maps with operators keep the client's feature names and operators; namespace and topic names pass through", () => {
    const zero = { ready: 0, delayed: 0, waiting: 0, leased: 0, dead: 0 };
    const counters = { enqueued: 0, delivered: 0, acked: 0, nacked: 0, expired: 0, cancelled: 0, dead: 0, redriven: 0 };
    const requires = { gpuModel: { in: ["a"] }, memGb: { gte: 8 } };
    const unmatchable = { asked: true, askers: 1, items: 2, signatures: [{ requires, items: 2 }], signaturesTruncated: true };
    const wire = statsToWire({
      nowMs: 1,
      totals: { ...zero, topics: 1, parkedWaiters: 0 },
      counters,
      namespaces: {
        myNs: { ...zero, topicCount: 1, topics: { someTopic: { ...zero, unmatchable } }, topicsTruncated: false, unmatchable: 2, parkedWaiters: 0, counters, quota: null },
      },
    }) as any;
    expect(Object.keys(wire.namespaces)).toEqual(["myNs"]);
    expect(Object.keys(wire.namespaces.myNs.topics)).toEqual(["someTopic"]);
    expect(wire.namespaces.myNs.topics.someTopic.unmatchable).toEqual({ asked: true, askers: 1, items: 2, signatures: [{ requires, items: 2 }], signatures_truncated: true });
    expect(wire.engine).toBeUndefined();
  });
});
