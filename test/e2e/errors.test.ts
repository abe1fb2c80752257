// Goal: every error code that can be provoked over TCP, against a real
// `orq serve` with configured limits (read back from hello, then probed at
// limit-1 / limit / limit+1): BAD_FRAME and FRAME_TOO_LARGE (closed; earlier
// pipelined requests carried out, bystanders unaffected), BAD_REQUEST with
// details.field and details.index (ids, op, ns, item fields, integer-only
// fields, requires paths, counts, leases, waits), UNKNOWN_OP, TOO_LARGE for
// payload, metadata, topic, key, namespace, batch, count, topics, ids and
// after lists, NOT_FOUND, and RATE_LIMITED with retry_after_ms on a namespace
// with a small quota while others are unaffected. A failed batch stores
// nothing. (UNAUTHORIZED / FORBIDDEN: test/e2e/auth.test.ts; SHUTTING_DOWN:
// test/e2e/shutdown.test.ts.)

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Encoder } from "@msgpack/msgpack";
import { rawFrame, RawConnection, type ReplyMap } from "../support/raw-connection.ts";
import { ServerProcess } from "../support/server-process.ts";

const frameBytesMax = 128 * 1024;
const payloadBytesMax = 2048;
const metadataBytesMax = 300;
const quotaPerMinute = 5;

const encoder = new Encoder();
let server: ServerProcess;
let conn: RawConnection;
let limits: Record<string, number>;

beforeAll(async () => {
  server = await ServerProcess.start({
    args: ["--shards", "2", "--frame-bytes-max", String(frameBytesMax), "--payload-bytes-max", String(payloadBytesMax), "--metadata-bytes-max", String(metadataBytesMax)],
    config: { namespaces: { slow: { enqueue_per_minute: quotaPerMinute }, refill: { enqueue_per_minute: 120 } } },
  });
  conn = await RawConnection.connect(server.port);
  const hello = await conn.call({ op: "hello", protocol: 1 });
  expect(hello.ok).toBe(true);
  expect(hello.max_frame_bytes).toBe(frameBytesMax);
  limits = hello.limits as Record<string, number>;
});

afterAll(async () => {
  conn?.close();
  await server?.cleanup();
});

type ErrorShape = { code: string; message: string; details?: Record<string, unknown> };

async function fails(request: Record<string, unknown>): Promise<ErrorShape> {
  const reply = await conn.call(request);
  if (reply.ok) throw new Error(`${String(request.op)} succeeded: ${JSON.stringify(reply)}`);
  expect(typeof reply.error!.message).toBe("string");
  expect(reply.error!.message.length).toBeGreaterThan(0);
  return reply.error!;
}

async function ok(request: Record<string, unknown>): Promise<ReplyMap> {
  const reply = await conn.call(request);
  if (!reply.ok) throw new Error(`${String(request.op)} failed: ${JSON.stringify(reply.error)}`);
  return reply;
}

async function expectKept(): Promise<void> {
  expect((await conn.call({ op: "ping" })).ok).toBe(true);
}

/** A request whose field at `marker` (the float 1234.5 placeholder) is sent as the MessagePack float64 `value`. */
function withFloat(request: Record<string, unknown>, value: number): Uint8Array {
  const body = encoder.encode(request).slice();
  const marker = new Uint8Array(9);
  const view = new DataView(marker.buffer);
  marker[0] = 0xcb;
  view.setFloat64(1, 1234.5);
  for (let i = 0; i + 9 <= body.length; i++) {
    if (marker.every((b, k) => body[i + k] === b)) {
      new DataView(body.buffer, body.byteOffset).setFloat64(i + 1, value);
      return rawFrame(body.length, body);
    }
  }
  throw new Error("marker not found");
}

const bytes = (n: number): Uint8Array => new Uint8Array(n).fill(7);
const nBytes = (n: number): string => "x".repeat(n);

describe("connection-level errors (closed)", () => {
  test("BAD_FRAME: trailing bytes, a non-string map key and a __proto__ key; requests before the bad frame are carried out", async () => {
    const bad: Uint8Array[] = [
      new Uint8Array([...encoder.encode({ id: 1, op: "ping" }), 0xc0]), // trailing nil
      new Uint8Array([0x81, 0xc3, 0x01]), // {true: 1}
      new Uint8Array([0x82, 0xa2, 0x69, 0x64, 0x01, 0xa9, ...new TextEncoder().encode("__proto__"), 0x80]),
      new Uint8Array([0xc1]), // never-used type byte
      new Uint8Array(0), // an empty frame holds no value
    ];
    for (const body of bad) {
      const victim = await RawConnection.connect(server.port);
      // An enqueue pipelined just before the bad frame, in the same write.
      const good = encoder.encode({ id: 5, op: "enqueue", ns: "badframe", items: [{ topic: "t", payload: body.length > 0 ? body : bytes(1) }] }).slice();
      victim.sendBytes(new Uint8Array([...rawFrame(good.length, good), ...rawFrame(body.length, body)]));
      await victim.waitClosed();
      const error = victim.replies.find((r) => r.id === 0);
      expect(error).toMatchObject({ id: 0, ok: false, error: { code: "BAD_FRAME" } });
    }
    await expectKept();
    const topics = (await ok({ op: "topics", ns: "badframe" })).topics as Array<{ ready: number }>;
    expect(topics).toEqual([expect.objectContaining({ topic: "t", ready: bad.length })]);
  });

  test("nesting: 32 levels (the request map is level 1) are read; 33 are BAD_FRAME and close", async () => {
    const nested = (levels: number): unknown => {
      let value: unknown = 1;
      for (let i = 0; i < levels; i++) value = [value];
      return value;
    };
    // The map is level 1 and x holds 31 arrays: levels 2..32 (the innermost 1 is a scalar inside level 32).
    expect((await conn.call({ op: "ping", x: nested(31) })).ok).toBe(true);
    const victim = await RawConnection.connect(server.port);
    const body = encoder.encode({ id: 3, op: "ping", x: nested(32) }).slice();
    victim.sendBytes(rawFrame(body.length, body));
    await victim.waitClosed();
    expect(victim.replies).toEqual([expect.objectContaining({ id: 0, ok: false, error: expect.objectContaining({ code: "BAD_FRAME" }) })]);
    await expectKept();
  });

  test("FRAME_TOO_LARGE: a frame of exactly max_frame_bytes is read; one byte more is refused and closed", async () => {
    const request = { id: 9, op: "ping", pad: new Uint8Array(0) };
    // Size the pad so the body is exactly the limit (the bin header grows with the pad).
    let padBytes = frameBytesMax - encoder.encode(request).length;
    for (let i = 0; i < 4; i++) padBytes += frameBytesMax - encoder.encode({ ...request, pad: bytes(padBytes) }).length;
    const atLimit = encoder.encode({ ...request, pad: bytes(padBytes) }).slice();
    expect(atLimit.length).toBe(frameBytesMax);
    const fine = await RawConnection.connect(server.port);
    fine.sendBytes(rawFrame(atLimit.length, atLimit));
    expect(await fine.reply(9)).toMatchObject({ id: 9, ok: true });
    fine.close();
    const over = encoder.encode({ ...request, pad: bytes(padBytes + 1) }).slice();
    const victim = await RawConnection.connect(server.port);
    victim.sendBytes(rawFrame(over.length, over));
    await victim.waitClosed();
    expect(victim.replies).toEqual([expect.objectContaining({ id: 0, ok: false, error: expect.objectContaining({ code: "FRAME_TOO_LARGE" }) })]);
    await expectKept();
  });
});

describe("BAD_REQUEST", () => {
  test("request id: missing, 0, negative, a float, 2^53 are answered with id 0 and field id; 2^53-1 is accepted", async () => {
    const nextReply = async (frame: Uint8Array): Promise<ReplyMap> => {
      const before = conn.replies.length;
      conn.sendBytes(frame);
      await conn.until(() => conn.replies.length > before, "a reply");
      return conn.replies[before]!;
    };
    for (const id of [undefined, 0, -1, 2 ** 53, "7"]) {
      const body = encoder.encode({ id, op: "ping" }).slice();
      expect(await nextReply(rawFrame(body.length, body))).toMatchObject({ id: 0, ok: false, error: { code: "BAD_REQUEST", details: { field: "id" } } });
    }
    expect(await nextReply(withFloat({ id: 1234.5, op: "ping" }, 3))).toMatchObject({ id: 0, ok: false, error: { code: "BAD_REQUEST", details: { field: "id" } } });
    expect((await conn.call({ id: 2 ** 53 - 1, op: "ping" })).ok).toBe(true);
    await expectKept();
  });

  test("op missing or not a string: field op; an unknown op string: UNKNOWN_OP; the connection is kept", async () => {
    expect(await fails({ op: undefined })).toMatchObject({ code: "BAD_REQUEST", details: { field: "op" } });
    expect(await fails({ op: 7 })).toMatchObject({ code: "BAD_REQUEST", details: { field: "op" } });
    expect((await fails({ op: "enqueued" })).code).toBe("UNKNOWN_OP");
    expect((await fails({ op: "PING" })).code).toBe("UNKNOWN_OP");
    expect((await fails({ op: "" })).code).toBe("UNKNOWN_OP");
    await expectKept();
  });

  test("hello: protocol must be 1", async () => {
    expect(await fails({ op: "hello", protocol: 2 })).toMatchObject({ code: "BAD_REQUEST", details: { field: "protocol" } });
    expect(await fails({ op: "hello" })).toMatchObject({ code: "BAD_REQUEST", details: { field: "protocol" } });
    expect((await ok({ op: "hello", protocol: 1, unknown_field: [1, { a: 2 }] })).server).toBe("orq");
    // With auth off a token is ignored, but its size is still checked.
    expect((await ok({ op: "hello", protocol: 1, token: nBytes(4096) })).server).toBe("orq");
    expect(await fails({ op: "hello", protocol: 1, token: nBytes(4097) })).toMatchObject({ code: "TOO_LARGE", details: { field: "token" } });
    expect(await fails({ op: "hello", protocol: 1, token: 5 })).toMatchObject({ code: "BAD_REQUEST", details: { field: "token" } });
  });

  test("ns: missing, wrong type, empty; over 255 bytes is TOO_LARGE", async () => {
    for (const op of ["enqueue", "dequeue", "ack", "nack", "extend", "cancel", "get", "topics", "dead", "redrive"]) {
      expect(await fails({ op })).toMatchObject({ code: "BAD_REQUEST", details: { field: "ns" } });
    }
    expect(await fails({ op: "get", ns: 5, ids: ["a"] })).toMatchObject({ code: "BAD_REQUEST", details: { field: "ns" } });
    expect(await fails({ op: "get", ns: "", ids: ["a"] })).toMatchObject({ code: "BAD_REQUEST", details: { field: "ns" } });
    expect((await ok({ op: "get", ns: nBytes(255), ids: ["a"] })).items).toEqual([null]);
    expect(await fails({ op: "get", ns: nBytes(256), ids: ["a"] })).toMatchObject({ code: "TOO_LARGE", details: { field: "ns" } });
  });

  test("enqueue item fields: the path and index of the first bad item; nothing of the batch is stored", async () => {
    const good = { topic: "t" };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ topic: "t", priority: 2 ** 31 }, "priority"],
      [{ topic: "t", priority: -(2 ** 31) - 1 }, "priority"],
      [{ topic: "t", priority: "1" }, "priority"],
      [{ topic: "t", payload: "a string" }, "payload"],
      [{ topic: "t", metadata: [1] }, "metadata"],
      [{ topic: 5 }, "topic"],
      [{ topic: "" }, "topic"],
      [{ priority: 1 }, "topic"],
      [{ topic: "t", delay_ms: -1 }, "delay_ms"],
      [{ topic: "t", delay_ms: 365 * 24 * 3600 * 1000 + 1 }, "delay_ms"],
      [{ topic: "t", lease_ms: 0 }, "lease_ms"],
      [{ topic: "t", lease_ms: limits.lease_ms_max! + 1 }, "lease_ms"],
      [{ topic: "t", ttl_ms: 0 }, "ttl_ms"],
      [{ topic: "t", ttl_ms: 365 * 24 * 3600 * 1000 + 1 }, "ttl_ms"],
      [{ topic: "t", deliver_at_ms: Date.now() + 2 * 365 * 24 * 3600 * 1000 }, "deliver_at_ms"],
      [{ topic: "t", max_attempts: 2 ** 31 }, "max_attempts"],
      [{ topic: "t", delivery: "exactly_once" }, "delivery"],
      [{ topic: "t", max_attempts: 0 }, "max_attempts"],
      [{ topic: "t", requires: "gpu" }, "requires"],
      [{ topic: "t", after: "0:1" }, "after"],
      [{ topic: "t", key: "" }, "key"],
      [{ topic: "t", key: 5 }, "key"],
    ];
    for (const [bad, field] of cases) {
      const error = await fails({ op: "enqueue", ns: "br-items", items: [good, good, good, bad, good] });
      expect([error.code, error.details]).toEqual(["BAD_REQUEST", { field: `items[3].${field}`, index: 3 }]);
    }
    expect(await fails({ op: "enqueue", ns: "br-items", items: [good, "not a map"] })).toMatchObject({ code: "BAD_REQUEST", details: { field: "items[1]", index: 1 } });
    expect(await fails({ op: "enqueue", ns: "br-items", items: [] })).toMatchObject({ code: "BAD_REQUEST", details: { field: "items" } });
    expect(await fails({ op: "enqueue", ns: "br-items", items: { topic: "t" } })).toMatchObject({ code: "BAD_REQUEST", details: { field: "items" } });
    expect((await ok({ op: "topics", ns: "br-items" })).topics).toEqual([]);
    // Edges that are fine: int32 bounds, nil as absent, unknown fields ignored.
    const ids = (await ok({ op: "enqueue", ns: "br-items", items: [{ topic: "t", priority: 2 ** 31 - 1 }, { topic: "t", priority: -(2 ** 31), delay_ms: null, color: "blue" }] })).ids as string[];
    expect(ids.length).toBe(2);
  });

  test("integer fields take MessagePack integers only: a float 8.0 is BAD_REQUEST; in requires and capabilities 8.0 == 8", async () => {
    // Explicit ids far above the connection's own counter, so no later call reuses them.
    conn.sendBytes(withFloat({ id: 1_000_070, op: "enqueue", ns: "br-float", items: [{ topic: "t" }, { topic: "t", priority: 1234.5 }] }, 8));
    expect((await conn.reply(1_000_070)).error).toMatchObject({ code: "BAD_REQUEST", details: { field: "items[1].priority", index: 1 } });
    conn.sendBytes(withFloat({ id: 1_000_071, op: "dequeue", ns: "br-float", topics: [{ topic: "t" }], wait_ms: 1234.5 }, 0));
    expect((await conn.reply(1_000_071)).error).toMatchObject({ code: "BAD_REQUEST", details: { field: "wait_ms" } });
    conn.sendBytes(withFloat({ id: 1_000_072, op: "enqueue", ns: "br-float", items: [{ topic: "t", requires: { cores: 1234.5 } }] }, 8));
    expect((await conn.reply(1_000_072)).ok).toBe(true);
    expect((await ok({ op: "dequeue", ns: "br-float", topics: [{ topic: "t" }], capabilities: { cores: 7 } })).items).toEqual([]);
    expect((await ok({ op: "dequeue", ns: "br-float", topics: [{ topic: "t" }], capabilities: { cores: 8 } })).items).toHaveLength(1);
    // And the other way round: an integer requirement, a float capability.
    await ok({ op: "enqueue", ns: "br-float", items: [{ topic: "u", requires: { cores: 8 } }] });
    conn.sendBytes(withFloat({ id: 1_000_073, op: "dequeue", ns: "br-float", topics: [{ topic: "u" }], capabilities: { cores: 1234.5 } }, 8));
    expect((await conn.reply(1_000_073)).items).toHaveLength(1);
  });

  test("requires: the path names the feature and operator; the index names the item", async () => {
    const cases: Array<[unknown, string]> = [
      [{ gpu: { near: "a100" } }, "requires.gpu.near"],
      [{ gpu: ["a100", "t4"] }, "requires.gpu"],
      [{ gpu: {} }, "requires.gpu"],
      [{ gpu: { in: [] } }, "requires.gpu.in"],
      [{ gpu: { in: "a100" } }, "requires.gpu.in"],
      [{ gpu: { all: ["a", { x: 1 }] } }, "requires.gpu.all[1]"],
      [{ mem: { gte: "8" } }, "requires.mem.gte"],
      [{ gpu: { exists: "yes" } }, "requires.gpu.exists"],
      [{ mem: { gte: 10, lt: 5 } }, "requires.mem"],
    ];
    for (const [requires, field] of cases) {
      const error = await fails({ op: "enqueue", ns: "br-req", items: [{ topic: "t" }, { topic: "t" }, { topic: "t", requires }] });
      expect([error.code, error.details]).toEqual(["BAD_REQUEST", { field: `items[2].${field}`, index: 2 }]);
    }
    expect(await fails({ op: "dequeue", ns: "br-req", topics: [{ topic: "t" }], capabilities: "gpu" })).toMatchObject({ code: "BAD_REQUEST", details: { field: "capabilities" } });
    expect(await fails({ op: "dequeue", ns: "br-req", topics: [{ topic: "t" }], capabilities: { gpu: { in: ["a"] } } })).toMatchObject({ code: "BAD_REQUEST" });
    expect((await ok({ op: "topics", ns: "br-req" })).topics).toEqual([]);
  });

  test("dequeue fields: topics[i].count, topics[i].topic, a topic listed twice, wait_ms and lease_ms ranges", async () => {
    const ns = "br-dq";
    const t = (extra: Record<string, unknown>) => ({ op: "dequeue", ns, topics: [{ topic: "a" }, { topic: "b", count: 2 }], ...extra });
    expect(await fails({ op: "dequeue", ns, topics: [{ topic: "a", count: 0 }] })).toMatchObject({ code: "BAD_REQUEST", details: { field: "topics[0].count", index: 0 } });
    expect(await fails({ op: "dequeue", ns, topics: [{ topic: "a" }, { topic: "b", count: -1 }] })).toMatchObject({ code: "BAD_REQUEST", details: { field: "topics[1].count", index: 1 } });
    expect(await fails({ op: "dequeue", ns, topics: [{ topic: "a" }, { count: 1 }] })).toMatchObject({ code: "BAD_REQUEST", details: { field: "topics[1].topic", index: 1 } });
    expect(await fails({ op: "dequeue", ns, topics: [{ topic: "a" }, { topic: "b" }, { topic: "a" }] })).toMatchObject({ code: "BAD_REQUEST", details: { index: 2 } });
    expect(await fails({ op: "dequeue", ns, topics: [] })).toMatchObject({ code: "BAD_REQUEST", details: { field: "topics" } });
    expect(await fails({ op: "dequeue", ns })).toMatchObject({ code: "BAD_REQUEST", details: { field: "topics" } });
    expect((await ok(t({ wait_ms: 0 }))).items).toEqual([]);
    expect(await fails(t({ wait_ms: limits.wait_ms_max! + 1 }))).toMatchObject({ code: "BAD_REQUEST", details: { field: "wait_ms" } });
    expect(await fails(t({ wait_ms: -1 }))).toMatchObject({ code: "BAD_REQUEST", details: { field: "wait_ms" } });
    expect((await ok(t({ lease_ms: limits.lease_ms_max! }))).items).toEqual([]);
    expect(await fails(t({ lease_ms: limits.lease_ms_max! + 1 }))).toMatchObject({ code: "BAD_REQUEST", details: { field: "lease_ms" } });
    expect(await fails(t({ lease_ms: 0 }))).toMatchObject({ code: "BAD_REQUEST", details: { field: "lease_ms" } });
  });

  test("receipt and id batches: the entry's path and index", async () => {
    const ns = "br-rc";
    expect(await fails({ op: "ack", ns, receipts: ["a", "b", 3] })).toMatchObject({ code: "BAD_REQUEST", details: { field: "receipts[2]", index: 2 } });
    expect(await fails({ op: "ack", ns, receipts: [] })).toMatchObject({ code: "BAD_REQUEST", details: { field: "receipts" } });
    expect(await fails({ op: "nack", ns, items: [{ receipt: "a" }, { delay_ms: 5 }] })).toMatchObject({ code: "BAD_REQUEST", details: { field: "items[1].receipt", index: 1 } });
    expect(await fails({ op: "nack", ns, items: [{ receipt: "a", delay_ms: 365 * 24 * 3600 * 1000 + 1 }] })).toMatchObject({ code: "BAD_REQUEST", details: { field: "items[0].delay_ms", index: 0 } });
    expect(await fails({ op: "nack", ns, items: [{ receipt: "a", delay_ms: -5 }] })).toMatchObject({ code: "BAD_REQUEST", details: { field: "items[0].delay_ms", index: 0 } });
    expect(await fails({ op: "nack", ns, items: [{ receipt: "a", metadata: "str" }] })).toMatchObject({ code: "BAD_REQUEST", details: { field: "items[0].metadata", index: 0 } });
    expect(await fails({ op: "extend", ns, items: [{ receipt: "a", lease_ms: 5 }, { receipt: "b" }] })).toMatchObject({ code: "BAD_REQUEST", details: { field: "items[1].lease_ms", index: 1 } });
    expect(await fails({ op: "extend", ns, items: [{ receipt: "a", lease_ms: limits.lease_ms_max! + 1 }] })).toMatchObject({ code: "BAD_REQUEST", details: { field: "items[0].lease_ms", index: 0 } });
    for (const op of ["cancel", "get"]) {
      expect(await fails({ op, ns, ids: ["a", "b", "c", "d", "e", "f", "g", null] })).toMatchObject({ code: "BAD_REQUEST", details: { field: "ids[7]", index: 7 } });
      expect(await fails({ op, ns, ids: [] })).toMatchObject({ code: "BAD_REQUEST", details: { field: "ids" } });
    }
    expect(await fails({ op: "redrive", ns, topic: "t", ids: [] })).toMatchObject({ code: "BAD_REQUEST", details: { field: "ids" } });
    expect(await fails({ op: "dead", ns })).toMatchObject({ code: "BAD_REQUEST", details: { field: "topic" } });
    expect(await fails({ op: "dead", ns, topic: "t", limit: 0 })).toMatchObject({ code: "BAD_REQUEST", details: { field: "limit" } });
    await expectKept();
  });
});

describe("TOO_LARGE (limits from hello, at the limit and one over)", () => {
  test("payload and metadata", async () => {
    const ns = "tl-bytes";
    expect(limits.payload_bytes_max).toBe(payloadBytesMax);
    expect(limits.metadata_bytes_max).toBe(metadataBytesMax);
    await ok({ op: "enqueue", ns, items: [{ topic: "t", payload: bytes(payloadBytesMax - 1), metadata: bytes(metadataBytesMax - 1) }] });
    const [id] = (await ok({ op: "enqueue", ns, items: [{ topic: "t", payload: bytes(payloadBytesMax), metadata: bytes(metadataBytesMax) }] })).ids as string[];
    const state = ((await ok({ op: "get", ns, ids: [id!] })).items as Array<{ payload: Uint8Array; metadata: Uint8Array }>)[0]!;
    expect([state.payload.length, state.metadata.length]).toEqual([payloadBytesMax, metadataBytesMax]);
    expect(await fails({ op: "enqueue", ns, items: [{ topic: "t" }, { topic: "t", payload: bytes(payloadBytesMax + 1) }] })).toMatchObject({ code: "TOO_LARGE", details: { field: "items[1].payload", index: 1 } });
    expect(await fails({ op: "enqueue", ns, items: [{ topic: "t", metadata: bytes(metadataBytesMax + 1) }] })).toMatchObject({ code: "TOO_LARGE", details: { field: "items[0].metadata", index: 0 } });
    // nack's metadata has the same limit.
    const [d] = (await ok({ op: "dequeue", ns, topics: [{ topic: "t" }] })).items as Array<{ receipt: string }>;
    expect(await fails({ op: "nack", ns, items: [{ receipt: d!.receipt, metadata: bytes(metadataBytesMax + 1) }] })).toMatchObject({ code: "TOO_LARGE", details: { field: "items[0].metadata", index: 0 } });
    expect(await ok({ op: "nack", ns, items: [{ receipt: d!.receipt, metadata: bytes(metadataBytesMax) }] })).toMatchObject({ nacked: 1 });
  });

  test("topic, key, after, id and receipt strings count UTF-8 bytes", async () => {
    const ns = "tl-strings";
    const euro = "\u20AC"; // 3 UTF-8 bytes, 1 UTF-16 unit
    expect(limits.topic_bytes_max).toBe(255);
    await ok({ op: "enqueue", ns, items: [{ topic: euro.repeat(85) }, { topic: nBytes(254) }, { topic: "k", key: nBytes(255) }] });
    expect(await fails({ op: "enqueue", ns, items: [{ topic: "t" }, { topic: euro.repeat(85) + "x" }] })).toMatchObject({ code: "TOO_LARGE", details: { field: "items[1].topic", index: 1 } });
    expect(await fails({ op: "enqueue", ns, items: [{ topic: "k", key: euro.repeat(86) }] })).toMatchObject({ code: "TOO_LARGE", details: { field: "items[0].key", index: 0 } });
    expect(await fails({ op: "dequeue", ns, topics: [{ topic: nBytes(256) }] })).toMatchObject({ code: "TOO_LARGE", details: { field: "topics[0].topic", index: 0 } });
    expect(await fails({ op: "get", ns, ids: ["a", nBytes(256)] })).toMatchObject({ code: "TOO_LARGE", details: { field: "ids[1]", index: 1 } });
    expect((await ok({ op: "get", ns, ids: [nBytes(255)] })).items).toEqual([null]);
    expect(await fails({ op: "ack", ns, receipts: [nBytes(256)] })).toMatchObject({ code: "TOO_LARGE", details: { field: "receipts[0]", index: 0 } });
    // after: 100 ids at most.
    const deps = (await ok({ op: "enqueue", ns, items: Array.from({ length: 101 }, () => ({ topic: "dep" })) })).ids as string[];
    const waiting = (await ok({ op: "enqueue", ns, items: [{ topic: "w", after: deps.slice(0, 100) }] })).ids as string[];
    expect(waiting.length).toBe(1);
    expect(await fails({ op: "enqueue", ns, items: [{ topic: "w", after: deps }] })).toMatchObject({ code: "TOO_LARGE", details: { field: "items[0].after", index: 0 } });
  });

  test("batch and count limits: items, count, topics per dequeue, receipts/ids per request", async () => {
    const ns = "tl-batch";
    const n = limits.items_per_enqueue_max!;
    expect(n).toBe(1000);
    expect(((await ok({ op: "enqueue", ns, items: Array.from({ length: n }, () => ({ topic: "t" })) })).ids as string[]).length).toBe(n);
    expect(await fails({ op: "enqueue", ns, items: Array.from({ length: n + 1 }, () => ({ topic: "t" })) })).toMatchObject({ code: "TOO_LARGE", details: { field: "items" } });
    const c = limits.count_per_dequeue_max!;
    expect(await fails({ op: "dequeue", ns, topics: [{ topic: "u" }, { topic: "t", count: c + 1 }] })).toMatchObject({ code: "TOO_LARGE", details: { field: "topics[1].count", index: 1 } });
    const all = (await ok({ op: "dequeue", ns, topics: [{ topic: "t", count: c }] })).items as Array<{ receipt: string; id: string }>;
    expect(all.length).toBe(c);
    const topics100 = Array.from({ length: 100 }, (_, i) => ({ topic: `q${i}` }));
    expect((await ok({ op: "dequeue", ns, topics: topics100 })).items).toEqual([]);
    expect(await fails({ op: "dequeue", ns, topics: [...topics100, { topic: "q100" }] })).toMatchObject({ code: "TOO_LARGE", details: { field: "topics" } });
    const m = limits.ids_per_request_max!;
    const receipts = all.map((d) => d.receipt);
    const ids = all.map((d) => d.id);
    expect(await fails({ op: "ack", ns, receipts: [...receipts, "x"] })).toMatchObject({ code: "TOO_LARGE", details: { field: "receipts" } });
    expect(await fails({ op: "extend", ns, items: [...receipts, "x"].map((receipt) => ({ receipt, lease_ms: 1000 })) })).toMatchObject({ code: "TOO_LARGE", details: { field: "items" } });
    expect(await fails({ op: "nack", ns, items: [...receipts, "x"].map((receipt) => ({ receipt })) })).toMatchObject({ code: "TOO_LARGE", details: { field: "items" } });
    for (const op of ["get", "cancel"]) expect(await fails({ op, ns, ids: [...ids, "x"] })).toMatchObject({ code: "TOO_LARGE", details: { field: "ids" } });
    expect(await fails({ op: "redrive", ns, topic: "t", ids: [...ids, "x"] })).toMatchObject({ code: "TOO_LARGE", details: { field: "ids" } });
    expect(receipts.length).toBe(m);
    expect(((await ok({ op: "get", ns, ids })).items as unknown[]).length).toBe(m);
    expect(await ok({ op: "ack", ns, receipts })).toMatchObject({ acked: m, stale: [] });
  });
});

describe("NOT_FOUND", () => {
  test("an after id the server does not know: the item's index; nothing stored", async () => {
    const ns = "nf";
    const [known] = (await ok({ op: "enqueue", ns, items: [{ topic: "dep" }] })).ids as string[];
    const error = await fails({ op: "enqueue", ns, items: [{ topic: "t", after: [known!] }, { topic: "t", after: [known!, "0:987654321"] }] });
    expect(error.code).toBe("NOT_FOUND");
    expect(error.details).toMatchObject({ index: 1 });
    expect(error.message).toContain("0:987654321");
    expect(((await ok({ op: "topics", ns })).topics as Array<{ topic: string }>).map((t) => t.topic)).toEqual(["dep"]);
    expect((await fails({ op: "enqueue", ns, items: [{ topic: "t", after: ["garbage"] }] })).code).toBe("NOT_FOUND");
  });
});

describe("RATE_LIMITED", () => {
  test("a namespace over enqueue_per_minute gets retry_after_ms; key hits and other namespaces are unaffected; a batch above the bucket is TOO_LARGE", async () => {
    const ns = "slow";
    const [first] = (await ok({ op: "enqueue", ns, items: [{ topic: "t", key: "k" }] })).ids as string[];
    for (let i = 1; i < quotaPerMinute; i++) await ok({ op: "enqueue", ns, items: [{ topic: "t" }] });
    const limited = await fails({ op: "enqueue", ns, items: [{ topic: "t" }] });
    expect(limited.code).toBe("RATE_LIMITED");
    const retryAfterMs = limited.details!.retry_after_ms as number;
    expect(Number.isInteger(retryAfterMs)).toBe(true);
    expect(retryAfterMs).toBeGreaterThanOrEqual(1);
    expect(retryAfterMs).toBeLessThanOrEqual(60_000 / quotaPerMinute);
    // A key hit is not a new item: it is answered, not refused.
    expect((await ok({ op: "enqueue", ns, items: [{ topic: "t", key: "k" }] })).ids).toEqual([first!]);
    // Other namespaces are unaffected; other ops on this one still work.
    for (let i = 0; i < quotaPerMinute * 3; i++) await ok({ op: "enqueue", ns: "fast", items: [{ topic: "t" }] });
    expect(((await ok({ op: "topics", ns })).topics as Array<{ ready: number }>)[0]!.ready).toBe(quotaPerMinute);
    // More new items in one batch than the bucket holds can never fit.
    expect((await fails({ op: "enqueue", ns, items: Array.from({ length: quotaPerMinute + 1 }, () => ({ topic: "t" })) })).code).toBe("TOO_LARGE");
    expect((await fails({ op: "enqueue", ns, items: [{ topic: "t" }] })).code).toBe("RATE_LIMITED");
  });

  test("the bucket refills continuously: after retry_after_ms (on the server's clock) the enqueue goes through", async () => {
    const ns = "refill"; // 120 per minute: one token per 500 ms
    expect(((await ok({ op: "enqueue", ns, items: Array.from({ length: 120 }, () => ({ topic: "t" })) })).ids as string[]).length).toBe(120);
    const limited = await fails({ op: "enqueue", ns, items: [{ topic: "t" }] });
    expect(limited.code).toBe("RATE_LIMITED");
    const retryAfterMs = limited.details!.retry_after_ms as number;
    expect(retryAfterMs).toBeGreaterThanOrEqual(1);
    expect(retryAfterMs).toBeLessThanOrEqual(500);
    // Let retry_after_ms pass on the server's clock: long-poll a marker delayed that long (another namespace).
    await ok({ op: "enqueue", ns: "refill-clock", items: [{ topic: "c", delay_ms: retryAfterMs }] });
    expect(((await ok({ op: "dequeue", ns: "refill-clock", topics: [{ topic: "c" }], wait_ms: 30_000 })).items as unknown[]).length).toBe(1);
    expect(((await ok({ op: "enqueue", ns, items: [{ topic: "t" }] })).ids as string[]).length).toBe(1);
  });
});
