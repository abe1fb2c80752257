// Goal: against a real server, `ack` results, `extend` progress and `wait`
// work as docs/PROTOCOL.md says: a parked wait holds up no other request on
// its connection and answers once its item ends, with the result; results and
// progress survive a crash (SIGKILL) and restart; SIGTERM answers a parked
// wait with the states it has; a crash leaves a parked wait's client with a
// closed connection (an error to act on), never silence; result_bytes_max is
// configurable, reported by hello and enforced.

import { afterEach, describe, expect, test } from "bun:test";
import { RawConnection } from "../support/raw-connection.ts";
import { ServerProcess } from "../support/server-process.ts";

let server: ServerProcess | null = null;

afterEach(async () => {
  await server?.cleanup();
  server = null;
});

async function leasedItem(conn: RawConnection, ns: string): Promise<{ id: string; receipt: string }> {
  const enqueued = await conn.call({ op: "enqueue", ns, items: [{ topic: "t" }] });
  const id = (enqueued.ids as string[])[0]!;
  const dequeued = await conn.call({ op: "dequeue", ns, topics: [{ topic: "t" }] });
  const receipt = (dequeued.items as Array<{ receipt: string }>)[0]!.receipt;
  return { id, receipt };
}

describe("results, progress and wait on a real server", () => {
  test("a parked wait lets its connection's later requests through, then answers with the ack's result; results and progress survive a crash", async () => {
    server = await ServerProcess.start();
    const conn = await RawConnection.connect(server.port);
    const job = await leasedItem(conn, "w");
    const other = await leasedItem(conn, "w");
    conn.send({ id: 500, op: "wait", ns: "w", ids: [job.id], wait_ms: 60_000 });
    // Later requests on the same connection are answered while the wait is parked.
    expect(await conn.call({ id: 501, op: "ping" })).toMatchObject({ ok: true });
    const progress = new TextEncoder().encode("50%");
    expect(await conn.call({ id: 502, op: "extend", ns: "w", items: [{ receipt: job.receipt, lease_ms: 60_000, metadata: progress }] })).toMatchObject({ ok: true, extended: 1 });
    const got = await conn.call({ id: 503, op: "get", ns: "w", ids: [job.id] });
    expect((got.items as Array<Record<string, unknown>>)[0]).toMatchObject({ state: "leased", metadata: progress });
    expect(conn.replies.some((r) => r.id === 500)).toBe(false);
    const result = new TextEncoder().encode('{"answer":42}');
    expect(await conn.call({ id: 504, op: "ack", ns: "w", receipts: [job.receipt], results: [result] })).toMatchObject({ ok: true, acked: 1 });
    expect(await conn.reply(500)).toEqual({ id: 500, ok: true, items: [{ id: job.id, state: "ended", outcome: "acked", result }] });

    // Crash and restart: the result and the other item's progress are still there.
    expect(await conn.call({ op: "extend", ns: "w", items: [{ receipt: other.receipt, lease_ms: 60_000, metadata: progress }] })).toMatchObject({ extended: 1 });
    conn.close();
    await server.restart({ signal: "SIGKILL" });
    const after = await RawConnection.connect(server.port);
    const states = await after.call({ op: "get", ns: "w", ids: [job.id, other.id] });
    expect(states.items).toMatchObject([{ id: job.id, state: "ended", outcome: "acked", result }, { id: other.id, metadata: progress }]);
    after.close();
  });

  test("a wait whose items do not end answers when wait_ms runs out, with their states then", async () => {
    server = await ServerProcess.start();
    const conn = await RawConnection.connect(server.port);
    const job = await leasedItem(conn, "t");
    const reply = await conn.call({ op: "wait", ns: "t", ids: [job.id, "0:999999"], wait_ms: 200 });
    expect(reply).toMatchObject({ ok: true, items: [{ id: job.id, state: "leased" }, null] });
    conn.close();
  });

  test("SIGTERM answers a parked wait with the states it has", async () => {
    server = await ServerProcess.start();
    const conn = await RawConnection.connect(server.port);
    const job = await leasedItem(conn, "s");
    conn.send({ id: 1000, op: "wait", ns: "s", ids: [job.id], wait_ms: 60_000 });
    await conn.call({ id: 1001, op: "ping" });
    server.signal("SIGTERM");
    expect(await conn.reply(1000)).toMatchObject({ id: 1000, ok: true, items: [{ id: job.id, state: "leased" }] });
    expect(await server.waitForExit()).toBe(0);
  });

  test("a crash (SIGKILL) closes a parked wait's connection: the client sees an error, not silence", async () => {
    server = await ServerProcess.start();
    const conn = await RawConnection.connect(server.port);
    const job = await leasedItem(conn, "k");
    conn.send({ id: 1000, op: "wait", ns: "k", ids: [job.id], wait_ms: 60_000 });
    await conn.call({ id: 1001, op: "ping" });
    await server.kill();
    await conn.waitClosed();
    expect(conn.replies.some((r) => r.id === 1000)).toBe(false);
    await expect(conn.reply(1000)).rejects.toThrow("connection closed");
  });

  test("result_bytes_max: configurable, in hello's limits, over it TOO_LARGE with field and index", async () => {
    server = await ServerProcess.start({ args: ["--result-bytes-max", "8"] });
    const conn = await RawConnection.connect(server.port);
    const hello = await conn.call({ op: "hello", protocol: 1 });
    expect((hello.limits as Record<string, unknown>).result_bytes_max).toBe(8);
    const job = await leasedItem(conn, "l");
    const over = await conn.call({ op: "ack", ns: "l", receipts: [job.receipt], results: [new Uint8Array(9)] });
    expect(over.error).toMatchObject({ code: "TOO_LARGE", details: { field: "results[0]", index: 0 } });
    const mismatched = await conn.call({ op: "ack", ns: "l", receipts: [job.receipt], results: [] });
    expect(mismatched.error).toMatchObject({ code: "BAD_REQUEST", details: { field: "results" } });
    expect(await conn.call({ op: "ack", ns: "l", receipts: [job.receipt], results: [new Uint8Array(8)] })).toMatchObject({ ok: true, acked: 1 });
    conn.close();
  });
});
