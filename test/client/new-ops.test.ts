// Goal: the TypeScript client's newer ops and fields against a real server
// (the contract's Schedules; Results, progress and waiting; Preferences;
// Trace context): enqueueAndWait returns the worker's result; waitFor answers
// with live states when its wait runs out; extend's metadata and an item's
// prefers, prefer_wait_ms and trace read back through get and dequeue;
// a schedule fires (its item carries the key schedule:<name>:<tick>), lists,
// and unschedules; OrqClusterClient does the same against one node; and with
// OpenTelemetry present a producer span's context crosses the server, so the
// worker's CONSUMER span is its child. It needs a server that implements
// those ops (its own test files cover the server side); the encoding alone
// is covered by new-op-requests.test.ts and worker-results.test.ts. No
// timing is asserted: waits end on what they wait for.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SpanKind, trace } from "@opentelemetry/api";
import { OrqClient, OrqClusterClient, type Delivery, type ItemState } from "../../src/client/index.ts";
import { installMemoryTracing, type MemoryTracing } from "../support/otel-memory.ts";
import { ServerProcess } from "../support/server-process.ts";

const text = (bytes: Uint8Array | undefined) => new TextDecoder().decode(bytes);
let server: ServerProcess;
let client: OrqClient;

beforeAll(async () => {
  server = await ServerProcess.start({ args: ["--shards", "2"] });
  client = await OrqClient.connect({ port: server.port });
});

afterAll(async () => {
  await client?.close();
  await server?.cleanup();
});

/** Dequeues `topic` until one delivery comes (each dequeue long-polls). */
async function takeOne(ns: string, topic: string): Promise<Delivery> {
  for (;;) {
    const [delivery] = await client.dequeue(ns, { topics: [{ topic }], waitMs: 5_000 });
    if (delivery !== undefined) return delivery;
  }
}

describe("results, progress and waiting", () => {
  test("enqueueAndWait resolves with the worker's returned result on the acked item", async () => {
    const worker = client.work({ ns: "r", topic: "double", concurrency: 2, leaseMs: 30_000, waitMs: 500 }, (d) => text(d.payload).repeat(2));
    const { ids, items } = await client.enqueueAndWait("r", [{ topic: "double", payload: "ab" }, { topic: "double", payload: "xy" }], 30_000).finally(() => worker.stop());
    expect(items).toEqual([
      { id: ids[0]!, state: "ended", outcome: "acked", result: new TextEncoder().encode("abab") },
      { id: ids[1]!, state: "ended", outcome: "acked", result: new TextEncoder().encode("xyxy") },
    ]);
    const [again] = await client.get("r", [ids[0]!]);
    expect(again).toMatchObject({ state: "ended", outcome: "acked" });
    expect(text((again as { result?: Uint8Array }).result)).toBe("abab");
  }, 60_000);

  test("waitFor answers with the items' live states when its wait runs out, null for an unknown id", async () => {
    const [id] = await client.enqueue("r", [{ topic: "idle", payload: "p" }]);
    const [live, unknown] = await client.waitFor("r", [id!, "0:999999"], 50);
    expect(live).toMatchObject({ id, state: "ready" });
    expect(unknown).toBeNull();
  });

  test("ack with results by hand, and extend with metadata (progress) that get shows", async () => {
    const [id] = await client.enqueue("r", [{ topic: "manual", metadata: "0%" }]);
    const delivery = await takeOne("r", "manual");
    expect(await client.extend("r", [{ receipt: delivery.receipt, leaseMs: 30_000, metadata: "50%" }])).toEqual({ extended: 1, stale: [] });
    const [during] = await client.get("r", [id!]);
    expect(text((during as ItemState).metadata)).toBe("50%");
    expect(await client.ack("r", [delivery.receipt], { results: ["fine"] })).toEqual({ acked: 1, stale: [] });
    const [after] = await client.waitFor("r", [id!], 1_000);
    expect(text((after as { result?: Uint8Array }).result)).toBe("fine");
  });
});

describe("item fields", () => {
  test("prefers, prefer_wait_ms and trace read back through get and dequeue", async () => {
    const itemTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 vendor=x";
    const [id] = await client.enqueue("f", [{ topic: "pref", prefers: { zone: { in: ["eu"], weight: 3 } }, preferWaitMs: 0, trace: itemTrace }]);
    const [state] = await client.get("f", [id!]);
    expect(state).toMatchObject({ id, prefers: { zone: { in: ["eu"], weight: 3 } }, trace: itemTrace });
    const delivery = await takeOne("f", "pref");
    expect(delivery.trace).toBe(itemTrace);
    await client.ack("f", [delivery.receipt]);
  });
});

describe("schedules", () => {
  test("a schedule lists, fires (one item keyed schedule:<name>:<tick>), and unschedules", async () => {
    const { name, nextAtMs } = await client.schedule("s", { name: "tick", everyMs: 1_000, item: { topic: "ticks", payload: "t", priority: 3 }, catchUp: "none" });
    expect(name).toBe("tick");
    expect(typeof nextAtMs).toBe("number");
    const page = await client.schedules("s");
    expect(page.schedules.map((s) => [s.name, s.everyMs, s.timezone, s.catchUp])).toEqual([["tick", 1_000, "UTC", "none"]]);
    expect(page.schedules[0]!.item).toMatchObject({ topic: "ticks", priority: 3 });
    const delivery = await takeOne("s", "ticks");
    expect(text(delivery.payload)).toBe("t");
    const [state] = await client.get("s", [delivery.id]);
    expect((state as ItemState).key).toMatch(/^schedule:tick:\d+$/);
    await client.ack("s", [delivery.receipt]);
    expect(await client.unschedule("s", "tick")).toEqual({ removed: true });
    expect(await client.unschedule("s", "tick")).toEqual({ removed: false });
    expect((await client.schedules("s")).schedules).toEqual([]);
  }, 30_000);
});

describe("OrqClusterClient against one node", () => {
  test("enqueueAndWait, waitFor and the schedule ops pass through", async () => {
    const cluster = await OrqClusterClient.connect({ port: server.port });
    try {
      const worker = cluster.work({ ns: "c", topic: "echo", concurrency: 1, leaseMs: 30_000, waitMs: 500 }, (d) => d.payload);
      const { items } = await cluster.enqueueAndWait("c", [{ topic: "echo", payload: "hi" }], 30_000).finally(() => worker.stop());
      expect(text((items[0] as { result?: Uint8Array }).result)).toBe("hi");
      await cluster.schedule("c", { name: "daily", cron: "0 8 * * *", timezone: "Europe/Paris", item: { topic: "digest" } });
      expect((await cluster.schedules("c")).schedules.map((s) => [s.name, s.cron, s.timezone])).toEqual([["daily", "0 8 * * *", "Europe/Paris"]]);
      expect(await cluster.unschedule("c", "daily")).toEqual({ removed: true });
    } finally {
      await cluster.close();
    }
  }, 60_000);
});

describe("trace context across the server", () => {
  let tracing: MemoryTracing;

  beforeAll(() => {
    tracing = installMemoryTracing();
  });

  afterAll(async () => {
    await tracing.uninstall();
  });

  test("a producer span's context rides the item: the worker's CONSUMER span is its child, in the same trace", async () => {
    const producer = await trace.getTracer("test").startActiveSpan("produce", async (span) => {
      await client.enqueue("t", [{ topic: "traced", payload: "x" }]);
      span.end();
      return span.spanContext();
    });
    let handled: () => void = () => {};
    const done = new Promise<void>((resolve) => (handled = resolve));
    const worker = client.work({ ns: "t", topic: "traced", concurrency: 1, leaseMs: 30_000, waitMs: 500 }, () => handled());
    await done;
    await worker.stop();
    const consumer = tracing.exporter.getFinishedSpans().find((span) => span.kind === SpanKind.CONSUMER);
    expect(consumer?.name).toBe("process traced");
    expect(consumer?.spanContext().traceId).toBe(producer.traceId);
    expect(consumer?.parentSpanContext?.spanId).toBe(producer.spanId);
  }, 30_000);
});
