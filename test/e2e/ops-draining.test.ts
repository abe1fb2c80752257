// Goal: while a real `orq serve` drains after SIGTERM, every work op
// (enqueue, dequeue, ack, nack, extend, cancel, redrive) is answered
// SHUTTING_DOWN on a connection that stays open, while hello, ping, get,
// topics, dead and stats still answer; the held lease and the stored items
// survive into the restarted server. The drain is held open deterministically
// by a client that does not read its replies (the server waits for every reply
// to be written, up to its 10 s bound), so the checks never race the exit.
// (test/e2e/shutdown.test.ts covers the parked dequeue, the exit code, restarts.)

import { afterAll, describe, expect, test } from "bun:test";
import { RawConnection, type ReplyMap } from "../support/raw-connection.ts";
import { ServerProcess } from "../support/server-process.ts";

let server: ServerProcess | null = null;

afterAll(async () => {
  await server?.cleanup();
});

describe("draining", () => {
  test("work ops get SHUTTING_DOWN, read ops still answer, then the server exits 0 and keeps the data", async () => {
    server = await ServerProcess.start({ args: ["--shards", "2"] });
    const conn = await RawConnection.connect(server.port);
    const ok = async (request: Record<string, unknown>): Promise<ReplyMap> => {
      const reply = await conn.call(request);
      if (!reply.ok) throw new Error(`${String(request.op)} failed: ${JSON.stringify(reply.error)}`);
      return reply;
    };
    const ns = "drain";
    const ids = (await ok({ op: "enqueue", ns, items: [{ topic: "t" }, { topic: "t" }, { topic: "d", max_attempts: 1 }] })).ids as string[];
    const [lease] = (await ok({ op: "dequeue", ns, topics: [{ topic: "t" }], lease_ms: 600_000 })).items as Array<{ id: string; receipt: string }>;
    const [dl] = (await ok({ op: "dequeue", ns, topics: [{ topic: "d" }] })).items as Array<{ receipt: string }>;
    await ok({ op: "nack", ns, items: [{ receipt: dl!.receipt }] });

    // A reader that never reads: about 20 MiB of replies it will not take keep the drain open.
    const setup = await RawConnection.connect(server.port);
    const payload = new Uint8Array(10 * 1024).fill(3);
    const bulk: string[] = [];
    for (let batch = 0; batch < 4; batch++) {
      bulk.push(...((await setup.call({ op: "enqueue", ns: "bulk", items: Array.from({ length: 250 }, () => ({ topic: "b", payload })) })).ids as string[]));
    }
    setup.close();
    const stuck = await RawConnection.connect(server.port);
    stuck.socket.pause();
    for (let i = 0; i < 2; i++) stuck.send({ op: "get", ns: "bulk", ids: bulk });
    // Poll the server's own gauge until the stuck replies are queued (a condition, not a timer).
    const unsentBytes = async (): Promise<number> => ((await ok({ op: "stats", ns })).server as { output_bytes_unsent: number }).output_bytes_unsent;
    for (let i = 0; i < 500 && (await unsentBytes()) < 1024 * 1024; i++) await Bun.sleep(10);
    expect(await unsentBytes()).toBeGreaterThanOrEqual(1024 * 1024);

    server.signal("SIGTERM");
    // The signal arrives asynchronously: the first refused enqueue shows the drain has begun.
    let refused: ReplyMap | null = null;
    let lateStored = 0;
    for (let i = 0; i < 10_000 && refused === null; i++) {
      const reply = await conn.call({ op: "enqueue", ns, items: [{ topic: "late" }] });
      if (reply.ok) lateStored++;
      else refused = reply;
    }
    expect(refused?.error?.code).toBe("SHUTTING_DOWN");

    const work: Array<Record<string, unknown>> = [
      { op: "enqueue", ns, items: [{ topic: "t" }] },
      { op: "dequeue", ns, topics: [{ topic: "t" }] },
      { op: "dequeue", ns, topics: [{ topic: "t" }], wait_ms: 10_000 },
      { op: "ack", ns, receipts: [lease!.receipt] },
      { op: "nack", ns, items: [{ receipt: lease!.receipt }] },
      { op: "extend", ns, items: [{ receipt: lease!.receipt, lease_ms: 1000 }] },
      { op: "cancel", ns, ids: [ids[1]!] },
      { op: "redrive", ns, topic: "d" },
    ];
    for (const request of work) {
      const reply = await conn.call(request);
      expect([request.op, reply.error?.code]).toEqual([request.op, "SHUTTING_DOWN"]);
    }
    expect((await ok({ op: "hello", protocol: 1 })).server).toBe("orq");
    expect((await ok({ op: "ping" })).now_ms).toEqual(expect.any(Number));
    const states = (await ok({ op: "get", ns, ids })).items as Array<{ state: string }>;
    expect(states.map((s) => s.state)).toEqual(["leased", "ready", "dead"]);
    const topics = (await ok({ op: "topics", ns })).topics as Array<Record<string, unknown>>;
    expect(topics.filter((t) => t.topic !== "late")).toEqual([
      { topic: "d", ready: 0, delayed: 0, waiting: 0, leased: 0, dead: 1, paused: false },
      { topic: "t", ready: 1, delayed: 0, waiting: 0, leased: 1, dead: 0, paused: false },
    ]);
    expect(((await ok({ op: "dead", ns, topic: "d" })).items as unknown[]).length).toBe(1);
    expect((await ok({ op: "stats", ns })).ok).toBe(true);

    // Let the stuck reader go: the drain completes and the server exits 0.
    stuck.close();
    expect(await server.waitForExit()).toBe(0);
    await conn.waitClosed();

    // Nothing refused was stored; the lease held before the signal is still in force after a restart.
    await server.restart();
    const after = await RawConnection.connect(server.port);
    expect(((await after.call({ op: "get", ns, ids })).items as Array<{ state: string }>).map((s) => s.state)).toEqual(["leased", "ready", "dead"]);
    // Exactly the enqueues answered ok before the drain began were stored.
    const late = (await after.call({ op: "topics", ns, prefix: "late" })).topics as Array<{ ready: number }>;
    expect(late.length === 0 ? 0 : late[0]!.ready).toBe(lateStored);
    expect(await after.call({ op: "ack", ns, receipts: [lease!.receipt] })).toMatchObject({ ok: true, acked: 1, stale: [] });
    after.close();
  }, 30_000);
});
