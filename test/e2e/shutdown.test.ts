// Goal: SIGTERM shuts a real server down gracefully: a parked dequeue is
// answered (with what it has), new work gets SHUTTING_DOWN or finds the
// connection closed, committed data survives, and the exit code is 0. Also:
// restart on the same data dir after SIGTERM and after SIGKILL keeps every
// acknowledged enqueue.

import { afterEach, describe, expect, test } from "bun:test";
import { OrqClient } from "../../src/client/index.ts";
import { RawConnection } from "../support/raw-connection.ts";
import { ServerProcess } from "../support/server-process.ts";

let server: ServerProcess | null = null;

afterEach(async () => {
  await server?.cleanup();
  server = null;
});

describe("graceful shutdown", () => {
  test("SIGTERM: parked dequeue answered, new work refused or connection closed, exit 0", async () => {
    server = await ServerProcess.start();
    const conn = await RawConnection.connect(server.port);
    conn.send({ id: 1, op: "dequeue", ns: "s", topics: [{ topic: "t" }], wait_ms: 60_000 });
    await conn.call({ id: 2, op: "ping" });
    server.signal("SIGTERM");
    const parked = await conn.reply(1);
    expect(parked).toMatchObject({ id: 1, ok: true, items: [] });
    // New work after the signal: SHUTTING_DOWN while draining, or the connection is already closed.
    conn.send({ id: 3, op: "enqueue", ns: "s", items: [{ topic: "t" }] });
    await conn.until(() => conn.closed || conn.replies.some((r) => r.id === 3), "reply 3 or close");
    const late = conn.replies.find((r) => r.id === 3);
    if (late !== undefined) expect(late.error!.code).toBe("SHUTTING_DOWN");
    expect(await server.waitForExit()).toBe(0);
    await conn.waitClosed();
    expect(server.logs()).toContain("stopped");
  });

  test("enqueues acknowledged before SIGTERM or SIGKILL survive a restart; the client reconnects", async () => {
    server = await ServerProcess.start();
    const client = await OrqClient.connect({ port: server.port, reconnectDelayMs: 20 });
    const first = await client.enqueue("d", [{ topic: "t", payload: "one", key: "k1" }]);
    await server.restart(); // SIGTERM, same data dir and port
    const second = await client.enqueue("d", [{ topic: "t", payload: "two" }]); // queued until reconnected
    await server.restart({ signal: "SIGKILL" });
    const states = await client.get("d", [...first, ...second]);
    expect(states.map((s) => s?.state)).toEqual(["ready", "ready"]);
    // The idempotency key still maps to the first item.
    expect(await client.enqueue("d", [{ topic: "t", key: "k1" }])).toEqual(first);
    const deliveries = await client.dequeue("d", { topics: [{ topic: "t", count: 10 }] });
    expect(deliveries.map((d) => new TextDecoder().decode(d.payload)).sort()).toEqual(["one", "two"]);
    await client.close();
  });
});
