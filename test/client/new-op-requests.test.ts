// Goal: the client's methods for the contract's newer ops and fields send
// exactly the wire requests the contract names, and read the replies back:
// schedule / unschedule / schedules, wait (waitFor and enqueueAndWait, whose
// timeout covers wait_ms), ack with `results`, extend with `metadata`, and
// enqueue with `prefers`, `prefer_wait_ms` and `trace` (the active
// OpenTelemetry span's context, written W3C-style, unless the item has its
// own or tracing is off). A recording stand-in server answers, so this runs
// without a server that implements the ops; test/client/new-ops.test.ts runs
// them against a real one.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { trace as otelTrace } from "@opentelemetry/api";
import { OrqClient } from "../../src/client/index.ts";
import { installMemoryTracing, type MemoryTracing } from "../support/otel-memory.ts";
import { startRecordingWireServer, type RecordingWireServer, type WireRequest } from "../support/recording-wire-server.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
let server: RecordingWireServer;
let client: OrqClient;
let tracing: MemoryTracing;

function answer(request: WireRequest): Record<string, unknown> {
  switch (request.op) {
    case "enqueue":
      return { ids: (request.items as unknown[]).map((_, i) => `1:${i + 1}`) };
    case "wait":
      return { items: (request.ids as string[]).map((id) => ({ id, state: "ended", outcome: "acked", result: bytes(`r-${id}`) })) };
    case "ack":
      return { acked: (request.receipts as unknown[]).length, stale: [] };
    case "extend":
      return { extended: (request.items as unknown[]).length, stale: [] };
    case "schedule":
      return { name: request.name, next_at_ms: 1_000 };
    case "unschedule":
      return { removed: true };
    case "schedules":
      return { schedules: [{ name: "a", every_ms: 5_000, timezone: "UTC", item: { topic: "t", payload: bytes("x") }, catch_up: "none", next_at_ms: 9 }], next: "a" };
    default:
      return {};
  }
}

beforeAll(async () => {
  server = await startRecordingWireServer(answer);
  client = await OrqClient.connect({ port: server.port });
  tracing = installMemoryTracing();
});

afterAll(async () => {
  await client.close();
  await server.stop();
  await tracing.uninstall();
});

describe("results, progress and waiting", () => {
  test("waitFor sends ns, ids and wait_ms, and reads each ended item's result", async () => {
    const items = await client.waitFor("n", ["1:1", "1:2"], 2_500);
    expect(server.sent("wait").at(-1)).toMatchObject({ ns: "n", ids: ["1:1", "1:2"], wait_ms: 2_500 });
    expect(items).toEqual([
      { id: "1:1", state: "ended", outcome: "acked", result: bytes("r-1:1") },
      { id: "1:2", state: "ended", outcome: "acked", result: bytes("r-1:2") },
    ]);
  });

  test("enqueueAndWait enqueues, then waits on the ids it got", async () => {
    const { ids, items } = await client.enqueueAndWait("n", [{ topic: "t", payload: "a" }, { topic: "t" }], 100);
    expect(ids).toEqual(["1:1", "1:2"]);
    expect(server.sent("wait").at(-1)).toMatchObject({ ns: "n", ids, wait_ms: 100 });
    expect(items.map((item) => item?.state)).toEqual(["ended", "ended"]);
  });

  test("ack sends results, one per receipt (strings as UTF-8, null for none), and none when not given", async () => {
    await client.ack("n", ["r1", "r2", "r3"], { results: ["done", bytes("raw"), null] });
    expect(server.sent("ack").at(-1)).toMatchObject({ receipts: ["r1", "r2", "r3"], results: [bytes("done"), bytes("raw"), null] });
    await client.ack("n", ["r4"]);
    expect("results" in server.sent("ack").at(-1)!).toBe(false);
  });

  test("extend sends an item's metadata when given", async () => {
    await client.extend("n", [{ receipt: "r1", leaseMs: 10, metadata: "50%" }, { receipt: "r2", leaseMs: 20 }]);
    const [first, second] = server.sent("extend").at(-1)!.items as Array<Record<string, unknown>>;
    expect(first).toEqual({ receipt: "r1", lease_ms: 10, metadata: bytes("50%") });
    expect(second).toEqual({ receipt: "r2", lease_ms: 20 });
  });
});

describe("schedules", () => {
  test("schedule, unschedule and schedules send the contract's fields and read the replies", async () => {
    expect(await client.schedule("n", { name: "s", cron: "*/5 * * * *", timezone: "UTC", item: { topic: "t", payload: "p" }, catchUp: "one" })).toEqual({ name: "s", nextAtMs: 1_000 });
    expect(server.sent("schedule").at(-1)).toMatchObject({ ns: "n", name: "s", cron: "*/5 * * * *", timezone: "UTC", item: { topic: "t", payload: bytes("p") }, catch_up: "one" });
    expect(await client.unschedule("n", "s")).toEqual({ removed: true });
    expect(server.sent("unschedule").at(-1)).toMatchObject({ ns: "n", name: "s" });
    const page = await client.schedules("n", { limit: 10, after: "0" });
    expect(server.sent("schedules").at(-1)).toMatchObject({ ns: "n", limit: 10, after: "0" });
    expect(page).toEqual({ schedules: [{ name: "a", everyMs: 5_000, timezone: "UTC", item: { topic: "t", payload: bytes("x") }, catchUp: "none", nextAtMs: 9 }], next: "a" });
  });
});

describe("enqueue's item fields and trace context", () => {
  test("prefers and prefer_wait_ms go as given; without an active span no trace is written", async () => {
    await client.enqueue("n", [{ topic: "t", prefers: { zone: "eu" }, preferWaitMs: 300 }]);
    const [item] = server.sent("enqueue").at(-1)!.items as Array<Record<string, unknown>>;
    expect(item).toEqual({ topic: "t", prefers: { zone: "eu" }, prefer_wait_ms: 300 });
  });

  test("inside an active span each item without a trace gets the span's traceparent; an item's own trace is kept", async () => {
    const tracer = otelTrace.getTracer("test");
    const expected = await tracer.startActiveSpan("produce", async (span) => {
      await client.enqueue("n", [{ topic: "t" }, { topic: "t", trace: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00" }]);
      const { traceId, spanId } = span.spanContext();
      span.end();
      return `00-${traceId}-${spanId}-01`;
    });
    const [first, second] = server.sent("enqueue").at(-1)!.items as Array<Record<string, unknown>>;
    expect(first!.trace).toBe(expected);
    expect(second!.trace).toBe("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
  });

  test("a client with trace: false writes none, even inside a span", async () => {
    const quiet = await OrqClient.connect({ port: server.port, trace: false });
    await otelTrace.getTracer("test").startActiveSpan("produce", async (span) => {
      await quiet.enqueue("n", [{ topic: "t" }]);
      span.end();
    });
    await quiet.close();
    const [item] = server.sent("enqueue").at(-1)!.items as Array<Record<string, unknown>>;
    expect(item).toEqual({ topic: "t" });
  });
});
