// Goal: the TCP server, in process around a FakeEngine: pipelined requests
// all answered; a parked dequeue does not hold up a later ping; every kind of
// abuse (random bytes, truncated frames, huge lengths, non-map values, deep
// nesting, a client that never reads) gets its code while the server stays up
// and a bystander connection is unaffected; per-connection in-flight and
// total connection caps; waiters cancelled on close; drain for shutdown.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Encoder } from "@msgpack/msgpack";
import type { ItemState } from "../../src/engine/api.ts";
import { FakeEngine } from "../support/fake-engine.ts";
import { startInProcessServer, type InProcessServer } from "../support/in-process-server.ts";
import { rawFrame, RawConnection } from "../support/raw-connection.ts";

const encoder = new Encoder();
let env: InProcessServer<FakeEngine>;
let bystander: RawConnection;

beforeAll(async () => {
  env = startInProcessServer();
  bystander = await RawConnection.connect(env.port);
});

afterAll(() => {
  bystander.close();
  env.stop();
});

async function expectBystanderFine(): Promise<void> {
  const reply = await bystander.call({ op: "ping" });
  expect(reply.ok).toBe(true);
}

describe("pipelining and ordering", () => {
  test("1,000 pipelined pings are all answered, each id once", async () => {
    const conn = await RawConnection.connect(env.port);
    for (let i = 1; i <= 1000; i++) conn.send({ id: i, op: "ping" });
    await conn.until(() => conn.replies.length >= 1000, "1000 replies");
    expect(new Set(conn.replies.map((r) => r.id)).size).toBe(1000);
    expect(conn.replies.every((r) => r.ok === true)).toBe(true);
    conn.close();
  });

  test("pipelined enqueues reach the engine in arrival order", async () => {
    const conn = await RawConnection.connect(env.port);
    const before = env.engine.callsOf("enqueue").length;
    for (let i = 1; i <= 50; i++) conn.send({ id: i, op: "enqueue", ns: "n", items: [{ topic: `t${i}` }] });
    await conn.until(() => conn.replies.length >= 50, "50 replies");
    const topics = env.engine.callsOf("enqueue").slice(before).map((c) => (c.args[1] as Array<{ topic: string }>)[0]!.topic);
    expect(topics).toEqual(Array.from({ length: 50 }, (_, i) => `t${i + 1}`));
    conn.close();
  });

  test("a parked dequeue does not hold up a later ping; closing the connection cancels its waiters", async () => {
    env.engine.parkDequeues = true;
    const conn = await RawConnection.connect(env.port);
    conn.send({ id: 1, op: "dequeue", ns: "n", topics: [{ topic: "t" }], wait_ms: 60_000 });
    conn.send({ id: 2, op: "ping" });
    await conn.reply(2);
    expect(conn.replies.map((r) => r.id)).toEqual([2]);
    const owner = (env.engine.callsOf("dequeue").at(-1)!.args[1] as { owner: number }).owner;
    conn.close();
    const cancelled = () => env.engine.callsOf("cancelWaiters").some((c) => c.args[0] === owner);
    while (!cancelled()) await Bun.sleep(2); // the server sees the close a moment later
    expect(cancelled()).toBe(true);
    env.engine.parkDequeues = false;
  });
});

describe("abuse", () => {
  test("random bytes: BAD_FRAME or FRAME_TOO_LARGE with id 0, then close", async () => {
    const conn = await RawConnection.connect(env.port);
    const noise = new Uint8Array(64);
    for (let i = 0; i < noise.length; i++) noise[i] = (i * 97 + 13) & 0xff;
    noise.set([0, 0, 0, 10], 0); // a plausible length, then garbage
    noise[4] = 0xc1; // never used in MessagePack
    conn.sendBytes(noise);
    await conn.waitClosed();
    expect(conn.replies[0]).toMatchObject({ id: 0, ok: false, error: { code: "BAD_FRAME" } });
    await expectBystanderFine();
  });

  test("a huge length: FRAME_TOO_LARGE with id 0, then close", async () => {
    const conn = await RawConnection.connect(env.port);
    conn.sendBytes(rawFrame(env.limits.frameBytesMax + 1));
    await conn.waitClosed();
    expect(conn.replies[0]).toMatchObject({ id: 0, error: { code: "FRAME_TOO_LARGE" } });
    await expectBystanderFine();
  });

  test("requests before a bad frame are carried out", async () => {
    const conn = await RawConnection.connect(env.port);
    const good = new Encoder().encode({ id: 1, op: "ping" });
    const bad = encoder.encode([1, 2, 3]);
    conn.sendBytes(new Uint8Array([...rawFrame(good.length, good), ...rawFrame(bad.length, bad)]));
    await conn.waitClosed();
    expect(conn.replies.map((r) => [r.id, r.ok])).toEqual([[1, true], [0, false]]);
    expect(conn.replies[1]!.error!.code).toBe("BAD_FRAME");
  });

  test("non-map values are BAD_FRAME", async () => {
    for (const value of [[1], "ping", 42, null, true]) {
      const conn = await RawConnection.connect(env.port);
      const body = encoder.encode(value);
      conn.sendBytes(rawFrame(body.length, body));
      await conn.waitClosed();
      expect(conn.replies[0]).toMatchObject({ id: 0, error: { code: "BAD_FRAME" } });
    }
    await expectBystanderFine();
  });

  test("deeply nested values are BAD_FRAME", async () => {
    const conn = await RawConnection.connect(env.port);
    const body = new Uint8Array(100_000).fill(0x91);
    conn.sendBytes(rawFrame(body.length, body));
    await conn.waitClosed();
    expect(conn.replies[0]).toMatchObject({ id: 0, error: { code: "BAD_FRAME" } });
    await expectBystanderFine();
  });

  test("a truncated frame waits for the rest; the connection stays usable for others; closing it is harmless", async () => {
    const conn = await RawConnection.connect(env.port);
    const body = encoder.encode({ id: 1, op: "ping" });
    conn.sendBytes(rawFrame(body.length, body).subarray(0, 6));
    await expectBystanderFine();
    expect(conn.replies).toEqual([]);
    conn.sendBytes(rawFrame(body.length, body).subarray(6));
    await conn.reply(1);
    conn.sendBytes(rawFrame(1000).subarray(0, 3));
    conn.close();
    await expectBystanderFine();
  });

  test("bad requests keep the connection: BAD_REQUEST, UNKNOWN_OP, TOO_LARGE", async () => {
    const conn = await RawConnection.connect(env.port);
    expect((await conn.call({ id: 1, op: "nope" })).error!.code).toBe("UNKNOWN_OP");
    expect((await conn.call({ id: 2, op: "enqueue", ns: "n", items: [{ topic: 5 }] })).error).toMatchObject({
      code: "BAD_REQUEST",
      details: { field: "items[0].topic", index: 0 },
    });
    expect((await conn.call({ id: 3, op: "enqueue", ns: "n", items: [{ topic: "t", payload: new Uint8Array(env.limits.payloadBytesMax + 1) }] })).error!.code).toBe("TOO_LARGE");
    conn.send({ op: "ping", id: 0 });
    await conn.until(() => conn.replies.some((r) => r.id === 0), "id 0 reply");
    expect(conn.replies.find((r) => r.id === 0)!.error!.code).toBe("BAD_REQUEST");
    expect((await conn.call({ id: 4, op: "ping" })).ok).toBe(true);
    conn.close();
  });

  test("a client that never reads its replies is paused at the output cap; others are unaffected", async () => {
    const big: ItemState = {
      id: "1:1", topic: "t", state: "ready", priority: 0, payload: new Uint8Array(10 * 1024), metadata: new Uint8Array(0), attempt: 0, deliverAtMs: 0, enqueuedAtMs: 0,
    };
    const originalGet = env.engine.get.bind(env.engine);
    env.engine.get = (ns, ids, nowMs) => {
      originalGet(ns, ids, nowMs);
      return { ok: true, value: { items: ids.map(() => big) } };
    };
    const conn = await RawConnection.connect(env.port);
    conn.socket.pause(); // never read
    const ids = new Array(1000).fill("1:1");
    const requests = 20; // 20 replies of ~10 MiB each: far more than the 8 MiB cap plus kernel buffers
    const before = env.engine.callsOf("get").length;
    for (let i = 1; i <= requests; i++) conn.send({ id: i, op: "get", ns: "n", ids });
    // Wait until the server stops processing: unsent output over the cap.
    while (env.server.stats().output_bytes_unsent! < env.limits.outputBytesPerConnectionMax) await Bun.sleep(5);
    await expectBystanderFine();
    const processed = env.engine.callsOf("get").length - before;
    expect(processed).toBeLessThan(requests);
    // Reading again lets everything through.
    conn.socket.resume();
    await conn.until(() => conn.replies.length >= requests, "all replies");
    expect(conn.replies.every((r) => r.ok)).toBe(true);
    env.engine.get = originalGet;
    conn.close();
  });
});

describe("caps", () => {
  test("in-flight requests per connection: reading stops at the cap and resumes below it", async () => {
    const local = startInProcessServer({ limits: { inflightPerConnectionMax: 3 } });
    local.engine.parkDequeues = true;
    const conn = await RawConnection.connect(local.port);
    for (let i = 1; i <= 5; i++) conn.send({ id: i, op: "dequeue", ns: "n", topics: [{ topic: "t" }], wait_ms: 60_000 });
    conn.send({ id: 6, op: "ping" });
    const other = await RawConnection.connect(local.port);
    await other.call({ op: "ping" });
    expect(local.engine.callsOf("dequeue").length).toBe(3);
    expect(conn.replies).toEqual([]);
    local.engine.releaseWaiters(); // answers the 3; the other 2 park; then the ping
    await conn.reply(6);
    expect(local.engine.callsOf("dequeue").length).toBe(5);
    local.engine.releaseWaiters();
    await conn.until(() => conn.replies.length === 6, "6 replies");
    conn.close();
    other.close();
    local.stop();
  });

  test("connections over connectionsMax are refused with UNAVAILABLE id 0", async () => {
    const local = startInProcessServer({ limits: { connectionsMax: 2 } });
    const a = await RawConnection.connect(local.port);
    const b = await RawConnection.connect(local.port);
    await a.call({ op: "ping" });
    await b.call({ op: "ping" });
    const c = await RawConnection.connect(local.port);
    await c.waitClosed();
    expect(c.replies[0]).toMatchObject({ id: 0, error: { code: "UNAVAILABLE", details: { retry_after_ms: 1000 } } });
    expect((await a.call({ op: "ping" })).ok).toBe(true);
    a.close();
    b.close();
    local.stop();
  });

  test("drain: parked dequeues answered, new work SHUTTING_DOWN, whenIdle resolves, close ends connections", async () => {
    const local = startInProcessServer();
    local.engine.parkDequeues = true;
    const conn = await RawConnection.connect(local.port);
    conn.send({ id: 1, op: "dequeue", ns: "n", topics: [{ topic: "t" }], wait_ms: 60_000 });
    await conn.call({ id: 2, op: "ping" });
    local.server.beginDrain();
    await conn.reply(1);
    expect(conn.replies.find((r) => r.id === 1)).toMatchObject({ ok: true, items: [] });
    expect((await conn.call({ id: 3, op: "enqueue", ns: "n", items: [{ topic: "t" }] })).error!.code).toBe("SHUTTING_DOWN");
    await local.server.whenIdle();
    local.server.close();
    await conn.waitClosed();
  });
});
