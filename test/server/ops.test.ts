// Goal: each op file decodes and checks its request fields exactly as the
// contract says (BAD_REQUEST with details.field/index for wrong types and
// out-of-range values, TOO_LARGE for sizes and counts over their limits,
// probed at limit-1, limit and limit+1; nil = absent; integers only; unknown
// fields ignored), converts to the engine's camelCase inputs (bins kept as the decoder
// copied them)
// and encodes replies in snake_case.

import { describe, expect, test } from "bun:test";
import { defaultLimits } from "../../src/limits.ts";
import { WholeFloat } from "../../src/protocol/msgpack-codec.ts";
import { AckReply, DeliveriesReply, plainReply } from "../../src/protocol/reply-encoder.ts";
import { failureToWire } from "../../src/server/error-mapping.ts";
import type { OpOutcome } from "../../src/server/op-types.ts";
import { opTable } from "../../src/server/op-table.ts";
import type { EnqueueItemInput, DequeueInput } from "../../src/engine/api.ts";
import { EnqueueItem } from "../../src/engine/ops/enqueue-item.ts";
import { makeOpContext, testNowMs } from "../support/op-context.ts";

const L = defaultLimits;

function run(op: keyof typeof opTable, request: Record<string, unknown>, ns: string | null = "ns1") {
  const ctx = makeOpContext();
  const outcome = opTable[op].handle(request, ns, ctx);
  return { outcome, engine: ctx.engine, ctx };
}

/** The failure as the wire carries it (error-mapping.ts): its code, `details.field` and `details.index`. */
function expectFailure(outcome: OpOutcome, code: string, field: string, index?: number): void {
  expect(outcome.kind).toBe("failure");
  if (outcome.kind !== "failure") return;
  const wire = failureToWire(outcome.failure);
  expect(wire.code).toBe(code as never);
  expect(wire.details?.field).toBe(field);
  if (index !== undefined) expect(wire.details?.index).toBe(index);
}

function expectReply(outcome: OpOutcome): Record<string, unknown> {
  expect(outcome.kind).toBe("reply");
  return outcome.kind === "reply" ? outcome.value : {};
}

const bytesOf = (n: number) => new Uint8Array(n).fill(97);
const stringOf = (n: number) => "a".repeat(n);

describe("enqueue", () => {
  const item = (fields: Record<string, unknown> = {}) => ({ topic: "t", ...fields });
  const enqueue = (items: unknown) => run("enqueue", { items });

  test("defaults, camelCase conversion, and ids in the reply", () => {
    const { outcome, engine } = enqueue([item({ unknown_field: 1, priority: null })]);
    expect(expectReply(outcome)).toEqual({ ids: ["0:1"] });
    const input = (engine.callsOf("enqueue")[0]!.args[1] as EnqueueItemInput[])[0]!;
    // Decoded into the EnqueueItem that becomes the record (its record-only fields are the engine's to fill).
    expect(input).toBeInstanceOf(EnqueueItem);
    expect(input).toMatchObject({
      topic: "t",
      priority: 0,
      payload: new Uint8Array(0),
      metadata: new Uint8Array(0),
      deliverAtMs: null,
      delayMs: null,
      leaseMs: null,
      ttlMs: null,
      delivery: "at_least_once",
      maxAttempts: 10,
      requires: null,
      after: null,
      key: null,
    });
  });

  test("every field converted", () => {
    const payload = bytesOf(3);
    const { engine } = enqueue([
      item({
        priority: -3,
        payload,
        metadata: bytesOf(2),
        deliver_at_ms: testNowMs + 5,
        lease_ms: 1000,
        ttl_ms: 60_000,
        delivery: "at_most_once",
        max_attempts: 3,
        requires: { gpu: new WholeFloat(8), os: "linux" },
        after: ["1:2"],
        key: "k",
      }),
    ]);
    const input = (engine.callsOf("enqueue")[0]!.args[1] as EnqueueItemInput[])[0]!;
    expect(input.priority).toBe(-3);
    expect(input.payload).toEqual(payload);
    expect(input.payload).toBe(payload); // kept as decoded: the request decoder copies bins out of the network buffer
    expect(input.deliverAtMs).toBe(testNowMs + 5);
    expect(input.delivery).toBe("at_most_once");
    expect(input.requires).toEqual({ gpu: 8, os: "linux" });
    expect(input.after).toEqual(["1:2"]);
    expect(input.key).toBe("k");
  });

  test("items count: 0 is BAD_REQUEST, max ok, max+1 TOO_LARGE, missing BAD_REQUEST", () => {
    expectFailure(enqueue([]).outcome, "BAD_REQUEST", "items");
    expect(enqueue(new Array(L.itemsPerEnqueueMax - 1).fill(item())).outcome.kind).toBe("reply");
    expect(enqueue(new Array(L.itemsPerEnqueueMax).fill(item())).outcome.kind).toBe("reply");
    expectFailure(enqueue(new Array(L.itemsPerEnqueueMax + 1).fill(item())).outcome, "TOO_LARGE", "items");
    expectFailure(run("enqueue", {}).outcome, "BAD_REQUEST", "items");
    expectFailure(enqueue("x").outcome, "BAD_REQUEST", "items");
  });

  test("a bad item names its path and index, and nothing is enqueued", () => {
    const { outcome, engine } = enqueue([item(), item(), item(), item({ priority: "high" })]);
    expectFailure(outcome, "BAD_REQUEST", "items[3].priority", 3);
    expect(engine.callsOf("enqueue")).toEqual([]);
    expectFailure(enqueue([item(), 5]).outcome, "BAD_REQUEST", "items[1]", 1);
  });

  test("topic: required, 1..max bytes (UTF-8), over is TOO_LARGE", () => {
    expectFailure(enqueue([{}]).outcome, "BAD_REQUEST", "items[0].topic", 0);
    expectFailure(enqueue([{ topic: "" }]).outcome, "BAD_REQUEST", "items[0].topic");
    expectFailure(enqueue([{ topic: 5 }]).outcome, "BAD_REQUEST", "items[0].topic");
    expect(enqueue([{ topic: stringOf(L.topicBytesMax - 1) }]).outcome.kind).toBe("reply");
    expect(enqueue([{ topic: stringOf(L.topicBytesMax) }]).outcome.kind).toBe("reply");
    expectFailure(enqueue([{ topic: stringOf(L.topicBytesMax + 1) }]).outcome, "TOO_LARGE", "items[0].topic");
    // 128 two-byte characters = 256 bytes
    expectFailure(enqueue([{ topic: "é".repeat(128) }]).outcome, "TOO_LARGE", "items[0].topic");
  });

  test("priority: int32 range, integers only", () => {
    expect(enqueue([item({ priority: 2 ** 31 - 1 })]).outcome.kind).toBe("reply");
    expect(enqueue([item({ priority: -(2 ** 31) })]).outcome.kind).toBe("reply");
    expectFailure(enqueue([item({ priority: 2 ** 31 })]).outcome, "BAD_REQUEST", "items[0].priority");
    expectFailure(enqueue([item({ priority: -(2 ** 31) - 1 })]).outcome, "BAD_REQUEST", "items[0].priority");
    expectFailure(enqueue([item({ priority: 1.5 })]).outcome, "BAD_REQUEST", "items[0].priority");
    expectFailure(enqueue([item({ priority: new WholeFloat(1) })]).outcome, "BAD_REQUEST", "items[0].priority");
  });

  test("payload and metadata: bin only, limit-1/limit ok, limit+1 TOO_LARGE", () => {
    for (const [name, max] of [["payload", L.payloadBytesMax], ["metadata", L.metadataBytesMax]] as const) {
      expect(enqueue([item({ [name]: bytesOf(max - 1) })]).outcome.kind).toBe("reply");
      expect(enqueue([item({ [name]: bytesOf(max) })]).outcome.kind).toBe("reply");
      expectFailure(enqueue([item({ [name]: bytesOf(max + 1) })]).outcome, "TOO_LARGE", `items[0].${name}`);
      expectFailure(enqueue([item({ [name]: "text" })]).outcome, "BAD_REQUEST", `items[0].${name}`);
    }
  });

  test("delay_ms / deliver_at_ms: at most one; ranges", () => {
    expectFailure(enqueue([item({ delay_ms: 1, deliver_at_ms: testNowMs })]).outcome, "BAD_REQUEST", "items[0].deliver_at_ms");
    expect(enqueue([item({ delay_ms: L.delayMsMax })]).outcome.kind).toBe("reply");
    expectFailure(enqueue([item({ delay_ms: L.delayMsMax + 1 })]).outcome, "BAD_REQUEST", "items[0].delay_ms");
    expectFailure(enqueue([item({ delay_ms: -1 })]).outcome, "BAD_REQUEST", "items[0].delay_ms");
    expect(enqueue([item({ deliver_at_ms: testNowMs + L.delayMsMax })]).outcome.kind).toBe("reply");
    expectFailure(enqueue([item({ deliver_at_ms: testNowMs + L.delayMsMax + 1 })]).outcome, "BAD_REQUEST", "items[0].deliver_at_ms");
    expect(enqueue([item({ delay_ms: null, deliver_at_ms: 5 })]).outcome.kind).toBe("reply");
  });

  test("lease_ms: 1..max", () => {
    expectFailure(enqueue([item({ lease_ms: 0 })]).outcome, "BAD_REQUEST", "items[0].lease_ms");
    expect(enqueue([item({ lease_ms: 1 })]).outcome.kind).toBe("reply");
    expect(enqueue([item({ lease_ms: L.leaseMsMax })]).outcome.kind).toBe("reply");
    expectFailure(enqueue([item({ lease_ms: L.leaseMsMax + 1 })]).outcome, "BAD_REQUEST", "items[0].lease_ms");
  });

  test("ttl_ms, max_attempts, delivery, requires, key, after", () => {
    expectFailure(enqueue([item({ ttl_ms: 0 })]).outcome, "BAD_REQUEST", "items[0].ttl_ms");
    expectFailure(enqueue([item({ max_attempts: 0 })]).outcome, "BAD_REQUEST", "items[0].max_attempts");
    expect(enqueue([item({ max_attempts: 1 })]).outcome.kind).toBe("reply");
    expectFailure(enqueue([item({ delivery: "exactly_once" })]).outcome, "BAD_REQUEST", "items[0].delivery");
    expectFailure(enqueue([item({ requires: [1] })]).outcome, "BAD_REQUEST", "items[0].requires");
    expectFailure(enqueue([item({ key: "" })]).outcome, "BAD_REQUEST", "items[0].key");
    expect(enqueue([item({ key: stringOf(L.keyBytesMax) })]).outcome.kind).toBe("reply");
    expectFailure(enqueue([item({ key: stringOf(L.keyBytesMax + 1) })]).outcome, "TOO_LARGE", "items[0].key");
    expect(enqueue([item({ after: new Array(L.afterIdsMax).fill("1:1") })]).outcome.kind).toBe("reply");
    expectFailure(enqueue([item({ after: new Array(L.afterIdsMax + 1).fill("1:1") })]).outcome, "TOO_LARGE", "items[0].after");
    expectFailure(enqueue([item({ after: ["1:1", 7] })]).outcome, "BAD_REQUEST", "items[0].after[1]", 0);
  });

  test("durable promise is passed through", () => {
    const ctx = makeOpContext();
    const durable = Promise.resolve();
    ctx.engine.durable = () => durable;
    const outcome = opTable.enqueue.handle({ items: [item()] }, "ns1", ctx);
    expect(outcome.kind === "reply" && outcome.durable).toBe(durable);
  });
});

describe("dequeue", () => {
  const dequeue = (fields: Record<string, unknown>) => run("dequeue", { topics: [{ topic: "t", count: 1 }], ...fields });

  test("converts to DequeueInput with the connection as owner", () => {
    const { outcome, engine, ctx } = dequeue({ wait_ms: 100, lease_ms: 500, capabilities: { gpu: new WholeFloat(2) } });
    expect(expectReply(outcome)).toEqual(new DeliveriesReply([]));
    const input = engine.callsOf("dequeue")[0]!.args[1] as DequeueInput;
    expect(input).toEqual({ topics: [{ topic: "t", count: 1 }], capabilities: { gpu: 2 }, waitMs: 100, leaseMs: 500, owner: ctx.session.connectionId });
  });

  test("count: default 1, 0 BAD_REQUEST, max ok, max+1 TOO_LARGE", () => {
    const { engine } = run("dequeue", { topics: [{ topic: "t" }] });
    expect((engine.callsOf("dequeue")[0]!.args[1] as DequeueInput).topics[0]!.count).toBe(1);
    expectFailure(dequeue({ topics: [{ topic: "t", count: 0 }] }).outcome, "BAD_REQUEST", "topics[0].count", 0);
    expect(dequeue({ topics: [{ topic: "t", count: L.countPerDequeueMax }] }).outcome.kind).toBe("reply");
    expectFailure(dequeue({ topics: [{ topic: "t", count: L.countPerDequeueMax + 1 }] }).outcome, "TOO_LARGE", "topics[0].count");
  });

  test("topics list: required, non-empty, at most topicsPerDequeueMax, no duplicates", () => {
    expectFailure(run("dequeue", {}).outcome, "BAD_REQUEST", "topics");
    expectFailure(dequeue({ topics: [] }).outcome, "BAD_REQUEST", "topics");
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ topic: `t${i}` }));
    expect(dequeue({ topics: many(L.topicsPerDequeueMax) }).outcome.kind).toBe("reply");
    expectFailure(dequeue({ topics: many(L.topicsPerDequeueMax + 1) }).outcome, "TOO_LARGE", "topics");
    expectFailure(dequeue({ topics: [{ topic: "a" }, { topic: "a" }] }).outcome, "BAD_REQUEST", "topics[1].topic", 1);
  });

  test("wait_ms and lease_ms above their maximum are BAD_REQUEST", () => {
    expect(dequeue({ wait_ms: L.waitMsMax }).outcome.kind).toBe("reply");
    expectFailure(dequeue({ wait_ms: L.waitMsMax + 1 }).outcome, "BAD_REQUEST", "wait_ms");
    expectFailure(dequeue({ wait_ms: new WholeFloat(5) }).outcome, "BAD_REQUEST", "wait_ms");
    expect(dequeue({ lease_ms: L.leaseMsMax }).outcome.kind).toBe("reply");
    expectFailure(dequeue({ lease_ms: L.leaseMsMax + 1 }).outcome, "BAD_REQUEST", "lease_ms");
    expectFailure(dequeue({ capabilities: "gpu" }).outcome, "BAD_REQUEST", "capabilities");
  });

  test("a parked dequeue becomes a parked outcome that settles into a reply", async () => {
    const ctx = makeOpContext();
    ctx.engine.parkDequeues = true;
    const outcome = opTable.dequeue.handle({ topics: [{ topic: "t" }], wait_ms: 1000 }, "ns1", ctx);
    expect(outcome.kind).toBe("parked");
    ctx.engine.releaseWaiters();
    if (outcome.kind === "parked") expect(await outcome.waiter).toEqual({ kind: "reply", value: new DeliveriesReply([]), durable: null });
  });

  test("deliveries are encoded in snake_case", () => {
    const ctx = makeOpContext();
    ctx.engine.dequeue = () => ({
      ok: true,
      kind: "done",
      deliveries: [
        { id: "1:2", topic: "t", priority: 0, payload: bytesOf(1), metadata: bytesOf(0), attempt: 1, receipt: "r", leaseExpiresAtMs: 5, enqueuedAtMs: 4 },
      ],
      durable: null,
    });
    const value = expectReply(opTable.dequeue.handle({ topics: [{ topic: "t" }] }, "ns1", ctx));
    expect(plainReply(value).items).toEqual([
      { id: "1:2", topic: "t", priority: 0, payload: bytesOf(1), metadata: bytesOf(0), attempt: 1, receipt: "r", lease_expires_at_ms: 5, enqueued_at_ms: 4 },
    ]);
  });
});

describe("receipt and id batches: ack, nack, extend, cancel, get", () => {
  const max = L.idsPerRequestMax;
  const ids = (n: number) => Array.from({ length: n }, (_, i) => `r${i}`);

  test("ack/cancel/get: 1..max strings; 0 BAD_REQUEST; max+1 TOO_LARGE; non-string BAD_REQUEST with index", () => {
    for (const [op, field] of [["ack", "receipts"], ["cancel", "ids"], ["get", "ids"]] as const) {
      expectFailure(run(op, { [field]: [] }).outcome, "BAD_REQUEST", field);
      expect(run(op, { [field]: ids(max - 1) }).outcome.kind).toBe("reply");
      expect(run(op, { [field]: ids(max) }).outcome.kind).toBe("reply");
      expectFailure(run(op, { [field]: ids(max + 1) }).outcome, "TOO_LARGE", field);
      expectFailure(run(op, { [field]: ["a", 1] }).outcome, "BAD_REQUEST", `${field}[1]`, 1);
      expectFailure(run(op, {}).outcome, "BAD_REQUEST", field);
    }
  });

  test("ack reply", () => {
    expect(expectReply(run("ack", { receipts: ["a", "b"] }).outcome)).toEqual(new AckReply(2, []));
  });

  test("nack: items with receipt, delay_ms, metadata", () => {
    const { outcome, engine } = run("nack", { items: [{ receipt: "a", delay_ms: 10, metadata: bytesOf(2) }, { receipt: "b" }] });
    expect(expectReply(outcome)).toEqual({ nacked: 2, stale: [] });
    expect(engine.callsOf("nack")[0]!.args[1]).toEqual([
      { receipt: "a", delayMs: 10, metadata: bytesOf(2) },
      { receipt: "b", delayMs: null, metadata: null },
    ]);
    expectFailure(run("nack", { items: [{ receipt: "a" }, { delay_ms: 1 }] }).outcome, "BAD_REQUEST", "items[1].receipt", 1);
    expectFailure(run("nack", { items: [{ receipt: "a", metadata: bytesOf(L.metadataBytesMax + 1) }] }).outcome, "TOO_LARGE", "items[0].metadata");
    expect(run("nack", { items: [{ receipt: "a", metadata: bytesOf(L.metadataBytesMax) }] }).outcome.kind).toBe("reply");
    expectFailure(run("nack", { items: new Array(max + 1).fill({ receipt: "a" }) }).outcome, "TOO_LARGE", "items");
  });

  test("extend: lease_ms required, 1..max", () => {
    expect(expectReply(run("extend", { items: [{ receipt: "a", lease_ms: 5 }] }).outcome)).toEqual({ extended: 1, stale: [] });
    expectFailure(run("extend", { items: [{ receipt: "a" }] }).outcome, "BAD_REQUEST", "items[0].lease_ms", 0);
    expectFailure(run("extend", { items: [{ receipt: "a", lease_ms: 0 }] }).outcome, "BAD_REQUEST", "items[0].lease_ms");
    expectFailure(run("extend", { items: [{ receipt: "a", lease_ms: L.leaseMsMax + 1 }] }).outcome, "BAD_REQUEST", "items[0].lease_ms");
  });

  test("ack results: one bin or nil per receipt (else BAD_REQUEST results), each at most result_bytes_max (TOO_LARGE with field and index)", () => {
    const acked = (request: Record<string, unknown>) => {
      const { outcome, engine } = run("ack", request);
      expect(outcome.kind).toBe("reply");
      return engine.callsOf("ack")[0]!.args[3];
    };
    expect(acked({ receipts: ["a"] })).toBeNull();
    expect(acked({ receipts: ["a"], results: null })).toBeNull();
    expect(acked({ receipts: ["a", "b"], results: [bytesOf(L.resultBytesMax), null] })).toEqual([bytesOf(L.resultBytesMax), null]);
    expect(acked({ receipts: ["a"], results: [bytesOf(L.resultBytesMax - 1)] })).toEqual([bytesOf(L.resultBytesMax - 1)]);
    expectFailure(run("ack", { receipts: ["a", "b"], results: [bytesOf(1)] }).outcome, "BAD_REQUEST", "results");
    expectFailure(run("ack", { receipts: ["a"], results: [null, null] }).outcome, "BAD_REQUEST", "results");
    expectFailure(run("ack", { receipts: ["a"], results: bytesOf(1) }).outcome, "BAD_REQUEST", "results");
    expectFailure(run("ack", { receipts: ["a", "b"], results: [null, bytesOf(L.resultBytesMax + 1)] }).outcome, "TOO_LARGE", "results[1]", 1);
    expectFailure(run("ack", { receipts: ["a", "b"], results: ["text", null] }).outcome, "BAD_REQUEST", "results[0]", 0);
  });

  test("extend metadata: bin up to metadata_bytes_max, passed on; absent is null", () => {
    const { outcome, engine } = run("extend", { items: [{ receipt: "a", lease_ms: 5, metadata: bytesOf(L.metadataBytesMax) }, { receipt: "b", lease_ms: 5 }] });
    expect(outcome.kind).toBe("reply");
    expect(engine.callsOf("extend")[0]!.args[1]).toEqual([
      { receipt: "a", leaseMs: 5, metadata: bytesOf(L.metadataBytesMax) },
      { receipt: "b", leaseMs: 5, metadata: null },
    ]);
    expectFailure(run("extend", { items: [{ receipt: "a", lease_ms: 5, metadata: bytesOf(L.metadataBytesMax + 1) }] }).outcome, "TOO_LARGE", "items[0].metadata", 0);
    expectFailure(run("extend", { items: [{ receipt: "a", lease_ms: 5, metadata: "x" }] }).outcome, "BAD_REQUEST", "items[0].metadata", 0);
  });

  test("wait: ids 1..max, wait_ms required 0..wait_ms_max, the connection as owner; a parked wait settles into a reply", async () => {
    const { outcome, engine } = run("wait", { ids: ["1:1"], wait_ms: L.waitMsMax });
    expect(expectReply(outcome)).toEqual({ items: [null] });
    expect(engine.callsOf("wait")[0]!.args.slice(0, 3)).toEqual(["ns1", ["1:1"], L.waitMsMax]);
    expectFailure(run("wait", { ids: ["1:1"] }).outcome, "BAD_REQUEST", "wait_ms");
    expectFailure(run("wait", { ids: ["1:1"], wait_ms: L.waitMsMax + 1 }).outcome, "BAD_REQUEST", "wait_ms");
    expectFailure(run("wait", { ids: ["1:1"], wait_ms: -1 }).outcome, "BAD_REQUEST", "wait_ms");
    expectFailure(run("wait", { ids: [], wait_ms: 0 }).outcome, "BAD_REQUEST", "ids");
    expectFailure(run("wait", { ids: ids(max + 1), wait_ms: 0 }).outcome, "TOO_LARGE", "ids");
    expect(run("wait", { ids: ids(max), wait_ms: 0 }).outcome.kind).toBe("reply");
    const ctx = makeOpContext();
    ctx.engine.wait = () => ({ ok: true, kind: "parked", waiter: Promise.resolve([{ id: "1:2", state: "ended", outcome: "acked", result: bytesOf(2) }]) });
    const parked = opTable.wait.handle({ ids: ["1:2"], wait_ms: 10 }, "ns1", ctx);
    if (parked.kind !== "parked") throw new Error("expected parked");
    const settled = await parked.waiter;
    expect(plainReply(expectReply(settled)).items).toEqual([{ id: "1:2", state: "ended", outcome: "acked", result: bytesOf(2) }]);
  });

  test("get encodes live, ended and missing states", () => {
    const ctx = makeOpContext();
    ctx.engine.get = () => ({
      ok: true,
      value: {
        items: [
          { id: "1:1", topic: "t", state: "dead", priority: 1, payload: bytesOf(0), metadata: bytesOf(0), attempt: 3, deliverAtMs: 1, enqueuedAtMs: 1, deadReason: "max_attempts" },
          { id: "1:2", state: "ended", outcome: "acked" },
          null,
        ],
      },
    });
    const value = expectReply(opTable.get.handle({ ids: ["1:1", "1:2", "1:3"] }, "ns1", ctx));
    expect(plainReply(value).items).toEqual([
      { id: "1:1", topic: "t", state: "dead", priority: 1, payload: bytesOf(0), metadata: bytesOf(0), attempt: 3, deliver_at_ms: 1, enqueued_at_ms: 1, dead_reason: "max_attempts" },
      { id: "1:2", state: "ended", outcome: "acked" },
      null,
    ]);
  });
});

describe("topics, dead, redrive, stats, hello, ping", () => {
  test("topics: limit defaults to and is capped at the page maximum; prefix/after passed through", () => {
    const { engine } = run("topics", { prefix: "a", after: "ab" });
    expect(engine.callsOf("topics")[0]!.args[1]).toEqual({ prefix: "a", limit: L.topicsPageMax, after: "ab" });
    const capped = run("topics", { limit: L.topicsPageMax + 1 });
    expect((capped.engine.callsOf("topics")[0]!.args[1] as { limit: number }).limit).toBe(L.topicsPageMax);
    expectFailure(run("topics", { limit: 0 }).outcome, "BAD_REQUEST", "limit");
    expectFailure(run("topics", { prefix: stringOf(L.topicBytesMax + 1) }).outcome, "TOO_LARGE", "prefix");
    expect(expectReply(run("topics", {}).outcome)).toEqual({ topics: [] });
  });

  test("dead: topic required", () => {
    expectFailure(run("dead", {}).outcome, "BAD_REQUEST", "topic");
    const { engine, outcome } = run("dead", { topic: "t", limit: 5 });
    expect(expectReply(outcome)).toEqual({ items: [] });
    expect(engine.callsOf("dead")[0]!.args).toEqual(["ns1", "t", 5]);
  });

  test("redrive: topic required, ids optional 1..max", () => {
    const { engine } = run("redrive", { topic: "t" });
    expect(engine.callsOf("redrive")[0]!.args.slice(0, 3)).toEqual(["ns1", "t", null]);
    expectFailure(run("redrive", { topic: "t", ids: [] }).outcome, "BAD_REQUEST", "ids");
    expectFailure(run("redrive", { topic: "t", ids: new Array(L.idsPerRequestMax + 1).fill("x") }).outcome, "TOO_LARGE", "ids");
    expect(expectReply(run("redrive", { topic: "t", ids: ["a"] }).outcome)).toEqual({ redriven: 0 });
  });

  test("stats: one namespace, or the token's scope", () => {
    const filterOf = (r: ReturnType<typeof run>) => {
      expectReply(r.outcome);
      return r.engine.callsOf("stats")[0]!.args[0];
    };
    expect(filterOf(run("stats", {}, "billing"))).toEqual(["billing"]);
    expect(filterOf(run("stats", {}, null))).toBeNull();
    const ctx = makeOpContext({ scope: { all: false, namespaces: new Set(["a", "b"]) } });
    expectReply(opTable.stats.handle({}, null, ctx));
    expect(ctx.engine.callsOf("stats")[0]!.args[0]).toEqual(["a", "b"]);
  });

  test("ping returns the server clock", () => {
    expect(expectReply(run("ping", {}, null).outcome)).toEqual({ now_ms: testNowMs });
  });

  test("hello: protocol must be 1; reply lists server info and limits", () => {
    expectFailure(run("hello", {}, null).outcome, "BAD_REQUEST", "protocol");
    expectFailure(run("hello", { protocol: 2 }, null).outcome, "BAD_REQUEST", "protocol");
    expectFailure(run("hello", { protocol: "1" }, null).outcome, "BAD_REQUEST", "protocol");
    const value = expectReply(run("hello", { protocol: 1, client: { anything: true } }, null).outcome);
    expect(value).toEqual({
      server: "orq",
      version: "0.1.0",
      protocol: 1,
      node_id: "node-test",
      shards: 16,
      max_frame_bytes: L.frameBytesMax,
      limits: {
        payload_bytes_max: L.payloadBytesMax,
        metadata_bytes_max: L.metadataBytesMax,
        items_per_enqueue_max: L.itemsPerEnqueueMax,
        count_per_dequeue_max: L.countPerDequeueMax,
        topic_bytes_max: L.topicBytesMax,
        wait_ms_max: L.waitMsMax,
        lease_ms_max: L.leaseMsMax,
        ids_per_request_max: L.idsPerRequestMax,
      },
    });
  });

  test("hello with tokens: valid token sets the scope; wrong or missing token is UNAUTHORIZED and clears it", () => {
    const ctx = makeOpContext({ tokens: [{ token: "s3cret", namespaces: ["billing"] }], scope: null });
    const ok = opTable.hello.handle({ protocol: 1, token: "s3cret" }, null, ctx);
    expect(ok.kind).toBe("reply");
    expect(ctx.session.scope).toEqual({ all: false, namespaces: new Set(["billing"]) });
    const wrong = opTable.hello.handle({ protocol: 1, token: "s3cret!" }, null, ctx);
    expect(wrong.kind === "error" && wrong.error.code).toBe("UNAUTHORIZED");
    expect(ctx.session.scope).toBeNull();
    const missing = opTable.hello.handle({ protocol: 1 }, null, ctx);
    expect(missing.kind === "error" && missing.error.code).toBe("UNAUTHORIZED");
  });
});
