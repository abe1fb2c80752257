// Goal: the generic checks run once, in order, before any handler (BAD_FRAME
// for undecodable or non-map frames, BAD_REQUEST id 0 for a bad id,
// UNKNOWN_OP, SHUTTING_DOWN, UNAUTHORIZED, ns shape, FORBIDDEN), and engine
// failures, durable rejections and exceptions map to wire errors in one place.

import { describe, expect, test } from "bun:test";
import { Encoder } from "@msgpack/msgpack";
import { AssertionError } from "../../src/lib/assert.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { defaultLimits } from "../../src/limits.ts";
import { TokenTable } from "../../src/server/auth.ts";
import { opTable } from "../../src/server/op-table.ts";
import { Dispatcher } from "../../src/server/dispatcher.ts";
import { silentLogger, type Logger } from "../../src/server/logger.ts";
import type { DequeueInput } from "../../src/engine/api.ts";
import { StorageUnavailableError } from "../../src/storage/writer.ts";
import { FakeEngine } from "../support/fake-engine.ts";
import { FakeSource, setup } from "../support/dispatcher-fixture.ts";

const encoder = new Encoder();

describe("frame-level checks", () => {
  test("undecodable bytes and non-map values are BAD_FRAME", () => {
    const { dispatcher } = setup();
    for (const body of [new Uint8Array([0xc1]), new Uint8Array(0), encoder.encode([1, 2]), encoder.encode("x"), encoder.encode(null), encoder.encode(new Uint8Array(3)), new Uint8Array([0x81, 0xa1, 0x61])]) {
      const source = new FakeSource();
      dispatcher.handleFrame(source, body);
      expect(source.failures.map((f) => f.code)).toEqual(["BAD_FRAME"]);
      expect(source.sent).toEqual([]);
    }
  });

  test("truncated frames, trailing bytes and forged lengths are BAD_FRAME and nothing is answered", () => {
    const { dispatcher } = setup();
    const request = encoder.encode({ id: 1, op: "ping", ns: "n", capabilities: { pool: "p1" } });
    const bodies = [
      ...Array.from({ length: request.length - 1 }, (_, length) => request.subarray(0, length)),
      new Uint8Array([...request, 0xc0]),
      new Uint8Array([0x81, 0xa1, 0x61, 0xdb, 0xff, 0xff, 0xff, 0xff, 0x61]), // str32 of 4 GiB
      new Uint8Array([0x81, 0xa1, 0x61, 0xdd, 0xff, 0xff, 0xff, 0xff, 0x01]), // array32 of 4 G elements
    ];
    for (const body of bodies) {
      const source = new FakeSource();
      dispatcher.handleFrame(source, body);
      expect(source.failures.map((f) => f.code)).toEqual(["BAD_FRAME"]);
      expect(source.sent).toEqual([]);
    }
  });

  test("nesting over decodeDepthMax is BAD_FRAME", () => {
    const { dispatcher } = setup();
    let value: unknown = 1;
    for (let i = 0; i < defaultLimits.decodeDepthMax; i++) value = [value];
    const source = new FakeSource();
    dispatcher.handleFrame(source, encoder.encode({ id: 1, op: "ping", deep: value }));
    expect(source.failures.map((f) => f.code)).toEqual(["BAD_FRAME"]);
  });

  test("a missing or out-of-range id is BAD_REQUEST with id 0", () => {
    const { dispatcher } = setup();
    for (const id of [undefined, 0, -1, 1.5, "1", 2 ** 53, null]) {
      const source = new FakeSource();
      dispatcher.handleFrame(source, encoder.encode({ id, op: "ping" }));
      expect(source.last()).toMatchObject({ id: 0, ok: false, error: { code: "BAD_REQUEST", details: { field: "id" } } });
    }
    const source = new FakeSource();
    dispatcher.handleFrame(source, encoder.encode({ id: 2 ** 53 - 1, op: "ping" }));
    expect(source.last()).toEqual({ id: 2 ** 53 - 1, ok: true, now_ms: 1000 });
  });

  test("op missing is BAD_REQUEST; unknown op is UNKNOWN_OP; both keep the id", () => {
    const { dispatcher } = setup();
    const source = new FakeSource();
    dispatcher.handleFrame(source, encoder.encode({ id: 5 }));
    expect(source.last()).toMatchObject({ id: 5, error: { code: "BAD_REQUEST", details: { field: "op" } } });
    dispatcher.handleFrame(source, encoder.encode({ id: 6, op: "toString" }));
    expect(source.last()).toMatchObject({ id: 6, error: { code: "UNKNOWN_OP" } });
    dispatcher.handleFrame(source, encoder.encode({ id: 7, op: "__proto__" }));
    expect(source.last()).toMatchObject({ id: 7, error: { code: "UNKNOWN_OP" } });
  });
});

describe("namespace and auth checks", () => {
  test("ns required: missing/empty BAD_REQUEST, 255 bytes ok, 256 TOO_LARGE", () => {
    const { dispatcher, engine } = setup();
    const source = new FakeSource();
    dispatcher.handleFrame(source, encoder.encode({ id: 1, op: "ack", receipts: ["r"] }));
    expect(source.last()).toMatchObject({ error: { code: "BAD_REQUEST", details: { field: "ns" } } });
    dispatcher.handleFrame(source, encoder.encode({ id: 2, op: "ack", ns: "", receipts: ["r"] }));
    expect(source.last()).toMatchObject({ error: { code: "BAD_REQUEST", details: { field: "ns" } } });
    dispatcher.handleFrame(source, encoder.encode({ id: 3, op: "ack", ns: "n".repeat(255), receipts: ["r"] }));
    expect(source.last()).toMatchObject({ ok: true });
    dispatcher.handleFrame(source, encoder.encode({ id: 4, op: "ack", ns: "n".repeat(256), receipts: ["r"] }));
    expect(source.last()).toMatchObject({ error: { code: "TOO_LARGE", details: { field: "ns" } } });
    expect(engine.callsOf("ack").length).toBe(1);
  });

  test("with tokens: ops other than hello and ping are UNAUTHORIZED before a valid hello", () => {
    const tokens = new TokenTable([{ token: "s3cret", namespaces: ["billing"] }]);
    const { dispatcher, engine } = setup({ tokens });
    const source = new FakeSource(null);
    dispatcher.handleFrame(source, encoder.encode({ id: 1, op: "ping" }));
    expect(source.last()).toMatchObject({ id: 1, ok: true });
    dispatcher.handleFrame(source, encoder.encode({ id: 2, op: "stats" }));
    expect(source.last()).toMatchObject({ id: 2, error: { code: "UNAUTHORIZED" } });
    dispatcher.handleFrame(source, encoder.encode({ id: 3, op: "hello", protocol: 1, token: "wrong" }));
    expect(source.last()).toMatchObject({ id: 3, error: { code: "UNAUTHORIZED" } });
    dispatcher.handleFrame(source, encoder.encode({ id: 4, op: "enqueue", ns: "billing", items: [{ topic: "t" }] }));
    expect(source.last()).toMatchObject({ id: 4, error: { code: "UNAUTHORIZED" } });
    dispatcher.handleFrame(source, encoder.encode({ id: 5, op: "hello", protocol: 1, token: "s3cret" }));
    expect(source.last()).toMatchObject({ id: 5, ok: true });
    dispatcher.handleFrame(source, encoder.encode({ id: 6, op: "enqueue", ns: "billing", items: [{ topic: "t" }] }));
    expect(source.last()).toMatchObject({ id: 6, ok: true });
    dispatcher.handleFrame(source, encoder.encode({ id: 7, op: "enqueue", ns: "other", items: [{ topic: "t" }] }));
    expect(source.last()).toMatchObject({ id: 7, error: { code: "FORBIDDEN" } });
    dispatcher.handleFrame(source, encoder.encode({ id: 8, op: "stats", ns: "other" }));
    expect(source.last()).toMatchObject({ id: 8, error: { code: "FORBIDDEN" } });
    dispatcher.handleFrame(source, encoder.encode({ id: 9, op: "stats" }));
    expect(source.last()).toMatchObject({ id: 9, ok: true, namespaces: {} });
    expect(engine.callsOf("stats").at(-1)!.args[0]).toEqual(["billing"]);
    expect(engine.callsOf("enqueue").length).toBe(1);
    // A failed re-hello drops the authentication.
    dispatcher.handleFrame(source, encoder.encode({ id: 10, op: "hello", protocol: 1 }));
    dispatcher.handleFrame(source, encoder.encode({ id: 11, op: "stats" }));
    expect(source.last()).toMatchObject({ id: 11, error: { code: "UNAUTHORIZED" } });
  });

  test("a read-only token may call every op that changes nothing and no op that changes state", () => {
    const tokens = new TokenTable([{ token: "look", namespaces: ["*"], role: "read" }, { token: "rw", namespaces: ["*"] }]);
    const { dispatcher, engine } = setup({ tokens });
    const source = new FakeSource(null);
    dispatcher.handleFrame(source, encoder.encode({ id: 1, op: "hello", protocol: 1, token: "look" }));
    expect(source.last()).toMatchObject({ id: 1, ok: true });
    let id = 2;
    for (const op of Object.keys(opTable) as Array<keyof typeof opTable>) {
      if (op === "hello") continue;
      dispatcher.handleFrame(source, encoder.encode({ id, op, ns: "n", topic: "t", ids: ["1"], receipts: ["r"], items: [{ topic: "t" }], topics: [{ topic: "t" }] }));
      const reply = source.last();
      if (opTable[op].changesState) expect(reply).toMatchObject({ id, error: { code: "FORBIDDEN", message: `this token is read-only: it may not use ${op}` } });
      else expect(reply.error?.code).not.toBe("FORBIDDEN");
      id++;
    }
    expect(engine.callsOf("enqueue").length + engine.callsOf("ack").length + engine.callsOf("redrive").length).toBe(0);
    // hello again with a read-write token lifts the restriction on the same connection.
    dispatcher.handleFrame(source, encoder.encode({ id: 100, op: "hello", protocol: 1, token: "rw" }));
    dispatcher.handleFrame(source, encoder.encode({ id: 101, op: "enqueue", ns: "n", items: [{ topic: "t" }] }));
    expect(source.last()).toMatchObject({ id: 101, ok: true });
  });

  test("the ops that change state are exactly these", () => {
    const changing = (Object.keys(opTable) as Array<keyof typeof opTable>).filter((op) => opTable[op].changesState).sort();
    expect(changing).toEqual(["ack", "cancel", "dequeue", "enqueue", "extend", "nack", "pause", "policy", "redrive", "resume", "schedule", "unschedule"]);
  });

  test("a '*' token may use every namespace", () => {
    const tokens = new TokenTable([{ token: "admin", namespaces: ["*"] }]);
    const { dispatcher, engine } = setup({ tokens });
    const source = new FakeSource(null);
    dispatcher.handleFrame(source, encoder.encode({ id: 1, op: "hello", protocol: 1, token: "admin" }));
    dispatcher.handleFrame(source, encoder.encode({ id: 2, op: "stats" }));
    expect(source.last()).toMatchObject({ id: 2, ok: true, namespaces: {} });
    expect(engine.callsOf("stats").at(-1)!.args[0]).toBeNull();
  });

  test("draining: work is SHUTTING_DOWN; hello, ping and reads still answer", () => {
    const { dispatcher } = setup();
    dispatcher.draining = true;
    const source = new FakeSource();
    for (const op of ["enqueue", "dequeue", "ack", "nack", "extend", "cancel", "redrive"]) {
      dispatcher.handleFrame(source, encoder.encode({ id: 1, op, ns: "n" }));
      expect(source.last()).toMatchObject({ error: { code: "SHUTTING_DOWN" } });
    }
    for (const op of ["ping", "stats"]) {
      dispatcher.handleFrame(source, encoder.encode({ id: 2, op }));
      expect(source.last()).toMatchObject({ ok: true });
    }
  });
});

describe("error mapping", () => {
  test("an engine Failure maps to its code with details", () => {
    const { dispatcher, engine } = setup();
    engine.enqueue = () => ({ ok: false, failure: { kind: "rate_limited", message: "slow down", retryAfterMs: 250 } });
    const source = new FakeSource();
    dispatcher.handleFrame(source, encoder.encode({ id: 1, op: "enqueue", ns: "n", items: [{ topic: "t" }] }));
    expect(source.last()).toEqual({ id: 1, ok: false, error: { code: "RATE_LIMITED", message: "slow down", details: { retry_after_ms: 250 } } });
  });

  test("a reply waits for durable; a StorageUnavailableError rejection is UNAVAILABLE with retry_after_ms", async () => {
    const { dispatcher, engine } = setup();
    let resolveDurable!: () => void;
    engine.durable = () => new Promise<void>((r) => (resolveDurable = r));
    const source = new FakeSource();
    dispatcher.handleFrame(source, encoder.encode({ id: 1, op: "enqueue", ns: "n", items: [{ topic: "t" }] }));
    expect(source.sent).toEqual([]);
    expect(source.inflight).toBe(1);
    resolveDurable();
    await Promise.resolve();
    await Promise.resolve();
    expect(source.last()).toEqual({ id: 1, ok: true, ids: ["0:1"] });
    expect(source.inflight).toBe(0);

    engine.durable = () => Promise.reject(new StorageUnavailableError("shard 3 failing", 3, 500));
    dispatcher.handleFrame(source, encoder.encode({ id: 2, op: "ack", ns: "n", receipts: ["r"] }));
    await Bun.sleep(0);
    expect(source.last()).toMatchObject({ id: 2, ok: false, error: { code: "UNAVAILABLE", details: { retry_after_ms: 500 } } });
  });

  test("an exception in a handler is INTERNAL with a request id, logged without tokens", () => {
    const logged: Array<Record<string, unknown>> = [];
    const logger: Logger = { ...silentLogger, error: (msg, fields) => logged.push({ msg, ...fields }) };
    const { dispatcher, engine } = setup({ logger });
    engine.ack = () => {
      throw new Error("boom");
    };
    const source = new FakeSource();
    dispatcher.handleFrame(source, encoder.encode({ id: 9, op: "ack", ns: "n", receipts: ["r"] }));
    const reply = source.last();
    expect(reply.error!.code).toBe("INTERNAL");
    const requestId = reply.error!.details!.request_id;
    expect(typeof requestId).toBe("string");
    expect(logged[0]).toMatchObject({ msg: "internal error", request_id: requestId, op: "ack" });
  });

  test("each dispatcher numbers its own internal errors: two in one process share no count", () => {
    const requestIds = (): string[] => {
      const { dispatcher, engine } = setup();
      engine.ack = () => {
        throw new Error("boom");
      };
      const source = new FakeSource();
      const ids: string[] = [];
      for (const id of [1, 2]) {
        dispatcher.handleFrame(source, encoder.encode({ id, op: "ack", ns: "n", receipts: ["r"] }));
        ids.push(source.last().error!.details!.request_id as string);
      }
      return ids;
    };
    // `<connection>-<request>-<internal error number>`: each dispatcher counts from 1 (it was one count per process).
    expect(requestIds()).toEqual(["3-1-1", "3-2-2"]);
    expect(requestIds()).toEqual(["3-1-1", "3-2-2"]);
  });

  test("an AssertionError in a handler is not answered: handleFrame rethrows it (the server stops the process)", () => {
    const { dispatcher, engine } = setup();
    engine.ack = () => {
      throw new AssertionError("heap broken");
    };
    const source = new FakeSource();
    expect(() => dispatcher.handleFrame(source, encoder.encode({ id: 9, op: "ack", ns: "n", receipts: ["r"] }))).toThrow(AssertionError);
    expect(source.sent).toEqual([]);
  });

  test("an AssertionError rejecting a reply's durable promise goes to the fatal handler, unanswered", async () => {
    const { dispatcher, engine, fatal } = setup();
    engine.durable = () => Promise.reject(new AssertionError("record broken"));
    const source = new FakeSource();
    dispatcher.handleFrame(source, encoder.encode({ id: 4, op: "ack", ns: "n", receipts: ["r"] }));
    await Bun.sleep(0);
    expect(source.sent).toEqual([]);
    expect(fatal.length).toBe(1);
    expect(fatal[0]?.error).toBeInstanceOf(AssertionError);
    expect(fatal[0]?.context).toEqual({ op: "ack", request_id: 4, connection: 3 });
  });

  test("the test-only ORQ_TEST_ASSERT_OP trigger asserts in the named op only", () => {
    const { dispatcher } = setup({ testAssertOp: "stats" });
    const source = new FakeSource();
    dispatcher.handleFrame(source, encoder.encode({ id: 1, op: "ping" }));
    expect(source.last()).toMatchObject({ id: 1, ok: true });
    expect(() => dispatcher.handleFrame(source, encoder.encode({ id: 2, op: "stats" }))).toThrow("test-only assertion in op stats (ORQ_TEST_ASSERT_OP)");
    expect(source.sent.length).toBe(1);
  });

  test("a parked dequeue does not block: its reply comes when the waiter settles", async () => {
    const { dispatcher, engine } = setup();
    engine.parkDequeues = true;
    const source = new FakeSource();
    dispatcher.handleFrame(source, encoder.encode({ id: 1, op: "dequeue", ns: "n", topics: [{ topic: "t" }], wait_ms: 1000 }));
    dispatcher.handleFrame(source, encoder.encode({ id: 2, op: "ping" }));
    expect(source.sent.map((r) => r.id)).toEqual([2]);
    engine.releaseWaiters();
    await Bun.sleep(0);
    expect(source.sent.map((r) => r.id)).toEqual([2, 1]);
    expect(source.inflight).toBe(0);
  });
});

describe("capabilities", () => {
  test("a repeated capabilities map reaches the engine as one frozen map, equal to what was sent; one with a whole float is copied with the float unmarked each time", () => {
    const { dispatcher, engine } = setup();
    const source = new FakeSource();
    const dequeue = (capabilities: unknown) => encoder.encode({ id: 1, op: "dequeue", ns: "n", topics: [{ topic: "t" }], capabilities });
    for (let i = 0; i < 2; i++) dispatcher.handleFrame(source, dequeue({ pool: "p1", mem_gb: 128, gpu: ["t4"] }));
    // capabilities {mem_gb: 64.0} as a float64 (a WholeFloat once decoded), after a 4-entry map that becomes 5.
    const head = encoder.encode({ id: 2, op: "dequeue", ns: "n", topics: [{ topic: "t" }] });
    const float = new Uint8Array(9);
    float[0] = 0xcb;
    new DataView(float.buffer).setFloat64(1, 64);
    const withWholeFloat = new Uint8Array([0x85, ...head.subarray(1), ...encoder.encode("capabilities"), 0x81, ...encoder.encode("mem_gb"), ...float]);
    for (let i = 0; i < 2; i++) dispatcher.handleFrame(source, withWholeFloat);
    const seen = engine.callsOf("dequeue").map((call) => (call.args[1] as DequeueInput).capabilities as Record<string, unknown>);
    expect(seen.length).toBe(4);
    expect(seen[0]).toEqual({ pool: "p1", mem_gb: 128, gpu: ["t4"] });
    expect(seen[1]).toBe(seen[0] as Record<string, unknown>);
    expect(Object.isFrozen(seen[0])).toBe(true);
    expect(seen[2]).toEqual({ mem_gb: 64 });
    expect(typeof (seen[2] as Record<string, unknown>).mem_gb).toBe("number");
    expect(seen[3]).not.toBe(seen[2] as Record<string, unknown>);
    expect(Object.isFrozen(seen[2])).toBe(false);
  });
});

describe("metrics hook", () => {
  test("onRequestDone sees every answered request with its op and code, parked ones when they settle", async () => {
    const done: Array<[string, string]> = [];
    const engine = new FakeEngine();
    engine.parkDequeues = true;
    const dispatcher = new Dispatcher({
      engine,
      limits: defaultLimits,
      clock: new ManualClock(1000),
      tokens: new TokenTable([]),
      serverInfo: { version: "0.1.0", nodeId: "n", shards: 4 },
      logger: silentLogger,
      serverStats: () => ({}),
      fatal: () => {
        throw new Error("no assertion expected");
      },
      onRequestDone: (op, code, durationMs) => {
        expect(durationMs).toBeGreaterThanOrEqual(0);
        done.push([op, code]);
      },
    });
    const source = new FakeSource();
    dispatcher.handleFrame(source, encoder.encode({ id: 1, op: "ping" }));
    dispatcher.handleFrame(source, encoder.encode({ id: 2, op: "nope" }));
    dispatcher.handleFrame(source, encoder.encode({ id: 3, op: "dequeue", ns: "n", topics: [{ topic: "t" }], wait_ms: 5 }));
    dispatcher.handleFrame(source, encoder.encode({ id: 4, op: "ack", ns: "n", receipts: [] }));
    expect(done).toEqual([["ping", "OK"], ["nope", "UNKNOWN_OP"], ["ack", "BAD_REQUEST"]]);
    engine.releaseWaiters();
    await Bun.sleep(0);
    expect(done.at(-1)).toEqual(["dequeue", "OK"]);
    // handleRequest (the dashboard's way in) is metered the same, unless the source says it is background work.
    const count = done.length;
    dispatcher.handleRequest(source, { id: 5, op: "ping" });
    expect(done.length).toBe(count + 1);
    const background = Object.assign(new FakeSource(), { metered: false });
    dispatcher.handleRequest(background, { id: 6, op: "ping" });
    expect(background.last()).toMatchObject({ id: 6, ok: true });
    expect(done.length).toBe(count + 1);
  });
});
