// Goal: in the worker loop a handler's return value is its item's result:
// bytes or a string go with the ack (`results`), nothing sends no result;
// context.progress sends one extend with the metadata; and with
// OpenTelemetry present each handler runs in a CONSUMER span whose parent is
// the delivery's trace (a remote parent), marked an error when it throws,
// with spans the handler makes nested in it. A fake WorkerClient stands in
// for the server.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { Delivery } from "../../src/client/types.ts";
import { startWorker, type WorkerClient, type WorkHandler, type WorkOptions } from "../../src/client/worker.ts";
import { installMemoryTracing, type MemoryTracing } from "../support/otel-memory.ts";

const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
const parentSpanId = "00f067aa0ba902b7";
let tracing: MemoryTracing;

beforeAll(() => {
  tracing = installMemoryTracing();
});

afterAll(async () => {
  await tracing.uninstall();
});

function delivery(id: string, itemTrace?: string): Delivery {
  const d: Delivery = { id, topic: "jobs", priority: 0, payload: new Uint8Array(), metadata: new Uint8Array(), attempt: 1, receipt: `${id}:1:1`, leaseExpiresAtMs: 0, enqueuedAtMs: 0 };
  if (itemTrace !== undefined) d.trace = itemTrace;
  return d;
}

interface Recorded {
  acks: Array<{ receipts: string[]; results?: unknown[] }>;
  nacks: string[];
  extends: Array<{ receipt: string; leaseMs: number; metadata?: Uint8Array | string }>;
}

/** Runs `handler` over `queued` until each delivery was acked or nacked; what the fake server was sent. */
async function runAll(queued: Delivery[], handler: WorkHandler, options: Partial<WorkOptions> = {}): Promise<Recorded> {
  const total = queued.length;
  const recorded: Recorded = { acks: [], nacks: [], extends: [] };
  const client: WorkerClient = {
    async dequeue() {
      await Bun.sleep(1);
      return queued.splice(0, queued.length);
    },
    async ack(_ns, receipts, ackOptions) {
      recorded.acks.push(ackOptions?.results === undefined ? { receipts } : { receipts, results: ackOptions.results });
      return { acked: receipts.length, stale: [] };
    },
    async nack(_ns, items) {
      recorded.nacks.push(...items.map((item) => item.receipt));
      return { nacked: items.length, stale: [] };
    },
    async extend(_ns, items) {
      recorded.extends.push(...items);
      return { extended: items.length, stale: [] };
    },
  };
  const worker = startWorker(client, { ns: "n", topic: "jobs", concurrency: 4, leaseMs: 60_000, backoffBaseMs: 1, ...options }, handler);
  while (recorded.acks.length + recorded.nacks.length < total) await Bun.sleep(1);
  await worker.stop();
  return recorded;
}

test("a string or bytes returned is the ack's result; nothing returned sends no results", async () => {
  const raw = new Uint8Array([1, 2, 3]);
  const recorded = await runAll([delivery("0:1"), delivery("0:2"), delivery("0:3")], (d) => (d.id === "0:1" ? "done" : d.id === "0:2" ? raw : undefined));
  const byReceipt = new Map(recorded.acks.map((ack) => [ack.receipts[0], ack.results]));
  expect(byReceipt.get("0:1:1:1")).toEqual(["done"]);
  expect(byReceipt.get("0:2:1:1")).toEqual([raw]);
  expect(byReceipt.has("0:3:1:1")).toBe(true);
  expect(byReceipt.get("0:3:1:1")).toBeUndefined();
});

test("context.progress sends one extend with the metadata and the worker's lease", async () => {
  const recorded = await runAll([delivery("0:1")], async (_d, context) => {
    expect(await context.progress("half")).toBe(true);
  });
  expect(recorded.extends).toEqual([{ receipt: "0:1:1:1", leaseMs: 60_000, metadata: "half" }]);
});

test("each handler runs in a CONSUMER span, child of the item's trace; a throw marks it an error", async () => {
  tracing.exporter.reset();
  const seenActive: string[] = [];
  await runAll([delivery("0:1", `00-${traceId}-${parentSpanId}-01 vendor=x`), delivery("0:2")], async (d) => {
    seenActive.push(trace.getActiveSpan()?.spanContext().traceId ?? "none");
    await trace.getTracer("handler").startActiveSpan("inner", async (span) => span.end());
    if (d.id === "0:2") throw new Error("boom");
  });
  const spans = tracing.exporter.getFinishedSpans();
  const consumer = spans.filter((span) => span.kind === SpanKind.CONSUMER);
  expect(consumer.map((span) => span.name)).toEqual(["process jobs", "process jobs"]);
  const traced = consumer.find((span) => span.attributes["messaging.message.id"] === "0:1")!;
  expect(traced.spanContext().traceId).toBe(traceId);
  expect(traced.parentSpanContext).toMatchObject({ traceId, spanId: parentSpanId, isRemote: true });
  expect(traced.parentSpanContext?.traceState?.get("vendor")).toBe("x");
  expect(traced.attributes).toMatchObject({ "messaging.system": "orq", "messaging.destination.name": "jobs", "messaging.orq.attempt": 1 });
  expect(seenActive).toContain(traceId);
  const failed = consumer.find((span) => span.attributes["messaging.message.id"] === "0:2")!;
  expect(failed.parentSpanContext).toBeUndefined();
  expect(failed.status.code).toBe(SpanStatusCode.ERROR);
  const inner = spans.filter((span) => span.name === "inner");
  expect(inner.map((span) => span.parentSpanContext?.spanId).sort()).toEqual(consumer.map((span) => span.spanContext().spanId).sort());
});

test("trace: false runs handlers without spans", async () => {
  tracing.exporter.reset();
  await runAll([delivery("0:1", `00-${traceId}-${parentSpanId}-01`)], () => undefined, { trace: false });
  expect(tracing.exporter.getFinishedSpans()).toEqual([]);
});
