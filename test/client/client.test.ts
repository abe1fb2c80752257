// Goal: the TypeScript client against an in-process server (FakeEngine):
// every typed method (list, pause and resume included) sends the right
// snake_case fields and converts the reply;
// pipelined calls resolve by id; errors become OrqError with code and details;
// timeouts (a dequeue's covers its wait_ms); requests in flight at a
// disconnect reject with DISCONNECTED; reconnect re-sends hello with the token;
// reconnect delays double up to their cap, with jitter. The timeout and
// back-off tests step a ManualClientClock instead of sleeping.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { OrqClient, OrqError } from "../../src/client/index.ts";
import type { DequeueInput, EnqueueItemInput } from "../../src/engine/api.ts";
import { FakeEngine } from "../support/fake-engine.ts";
import { startInProcessServer, type InProcessServer } from "../support/in-process-server.ts";
import { ManualClientClock } from "../support/manual-client-clock.ts";

let env: InProcessServer<FakeEngine>;
let client: OrqClient;

beforeAll(async () => {
  env = startInProcessServer();
  client = await OrqClient.connect({ port: env.port, clientName: "test" });
});

afterAll(async () => {
  await client.close();
  env.stop();
});

/** Until the in-process server holds `count` parked dequeues (they arrive over a real socket). */
async function untilParked(count: number): Promise<void> {
  while (env.engine.parked.length < count) await Bun.sleep(1);
}

/** Lets the promise callbacks a clock step queued run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe("typed methods", () => {
  test("connect says hello and keeps the server info", () => {
    expect(client.server).toMatchObject({ server: "orq", protocol: 1, nodeId: "in-process", shards: 4 });
    expect(client.server!.limits.itemsPerEnqueueMax).toBe(1000);
  });

  test("ping", async () => {
    const { nowMs } = await client.ping();
    expect(typeof nowMs).toBe("number");
  });

  test("enqueue converts camelCase items and string payloads", async () => {
    const ids = await client.enqueue("ns1", [
      { topic: "t", payload: "hi", priority: 3, delayMs: 10, maxAttempts: 2, delivery: "at_most_once", requires: { gpu: 8 } },
      { topic: "u" },
    ]);
    expect(ids.length).toBe(2);
    const [ns, items] = env.engine.callsOf("enqueue").at(-1)!.args as [string, EnqueueItemInput[]];
    expect(ns).toBe("ns1");
    expect(items[0]).toMatchObject({ topic: "t", priority: 3, delayMs: 10, maxAttempts: 2, delivery: "at_most_once", requires: { gpu: 8 } });
    expect(new TextDecoder().decode(items[0]!.payload)).toBe("hi");
  });

  test("dequeue converts topics and options", async () => {
    const deliveries = await client.dequeue("ns1", { topics: [{ topic: "t", count: 5 }], waitMs: 0, leaseMs: 100, capabilities: { os: "linux" } });
    expect(deliveries).toEqual([]);
    const input = env.engine.callsOf("dequeue").at(-1)!.args[1] as DequeueInput;
    expect(input).toMatchObject({ topics: [{ topic: "t", count: 5 }], waitMs: 0, leaseMs: 100, capabilities: { os: "linux" } });
  });

  test("ack, nack, extend, cancel, get, topics, dead, redrive, stats", async () => {
    expect(await client.ack("ns1", ["r1", "r2"])).toEqual({ acked: 2, stale: [] });
    expect(await client.nack("ns1", [{ receipt: "r1", delayMs: 5, metadata: "m" }])).toEqual({ nacked: 1, stale: [] });
    expect(env.engine.callsOf("nack").at(-1)!.args[1]).toEqual([{ receipt: "r1", delayMs: 5, metadata: new TextEncoder().encode("m") }]);
    expect(await client.extend("ns1", [{ receipt: "r1", leaseMs: 1000 }])).toEqual({ extended: 1, stale: [] });
    expect(await client.cancel("ns1", ["1:1"])).toEqual({ cancelled: 0, missing: ["1:1"] });
    expect(await client.get("ns1", ["1:1"])).toEqual([null]);
    expect(await client.topics("ns1", { prefix: "a" })).toEqual({ topics: [], next: null });
    expect(await client.dead("ns1", "t", { limit: 3 })).toEqual([]);
    expect(await client.redrive("ns1", "t")).toEqual({ redriven: 0 });
    const stats = await client.stats();
    expect(env.engine.callsOf("stats").at(-1)!.args[0]).toBeNull(); // every namespace
    expect(stats.namespaces).toEqual({});
    expect(stats.server).toMatchObject({ connections: expect.any(Number) });
  });

  test("list, pause, resume, and topics with paused: fields both ways", async () => {
    const engine = env.engine;
    const original = { list: engine.list, topics: engine.topics };
    engine.list = (ns, topic, query, nowMs) => {
      original.list.call(engine, ns, topic, query, nowMs);
      return {
        items: [{ id: "1:7", topic, state: "dead", priority: 2, payload: new Uint8Array([1]), metadata: new Uint8Array(0), attempt: 3, deliverAtMs: 5, enqueuedAtMs: 4, deadReason: "nacked" }],
        next: { phase: "enqueued", key: 7 },
      };
    };
    engine.topics = () => ({
      topics: [
        { topic: "a", ready: 1, delayed: 0, waiting: 0, leased: 0, dead: 0, paused: true, pausedUntilMs: 99 },
        { topic: "b", ready: 0, delayed: 0, waiting: 0, leased: 0, dead: 0, paused: false },
      ],
      next: null,
    });
    try {
      const page = await client.list("ns1", "t", { state: "dead", limit: 5, after: "e.3" });
      expect(page).toEqual({
        items: [{ id: "1:7", topic: "t", state: "dead", priority: 2, payload: new Uint8Array([1]), metadata: new Uint8Array(0), attempt: 3, deliverAtMs: 5, enqueuedAtMs: 4, deadReason: "nacked" }],
        next: "e.7",
      });
      expect(engine.callsOf("list").at(-1)!.args.slice(0, 3)).toEqual(["ns1", "t", { state: "dead", limit: 5, after: { phase: "enqueued", key: 3 } }]);
      expect((await client.topics("ns1")).topics).toEqual([
        { topic: "a", ready: 1, delayed: 0, waiting: 0, leased: 0, dead: 0, paused: true, pausedUntilMs: 99 },
        { topic: "b", ready: 0, delayed: 0, waiting: 0, leased: 0, dead: 0, paused: false },
      ]);
    } finally {
      engine.list = original.list;
      engine.topics = original.topics;
    }
    const timed = await client.pause("ns1", "t", { forMs: 500 });
    expect(timed.pausedUntilMs).toBe((engine.callsOf("pause").at(-1)!.args[3] as number) + 500);
    expect(engine.callsOf("pause").at(-1)!.args.slice(0, 3)).toEqual(["ns1", "t", 500]);
    expect(await client.pause("ns1", "t")).toEqual({ pausedUntilMs: null });
    expect(engine.callsOf("pause").at(-1)!.args[2]).toBeNull();
    expect(await client.resume("ns1", "t")).toEqual({ resumed: false });
    expect(engine.callsOf("resume").at(-1)!.args.slice(0, 2)).toEqual(["ns1", "t"]);
    const refused = await client.list("ns1", "t", { limit: 1001 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OrqError);
    expect((refused as OrqError).code).toBe("TOO_LARGE");
  });

  test("pipelined calls resolve by id", async () => {
    const replies = await Promise.all(Array.from({ length: 500 }, () => client.ping()));
    expect(replies.length).toBe(500);
  });

  test("server errors reject with OrqError carrying code and details", async () => {
    const error = await client.enqueue("ns1", [{ topic: "" }]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OrqError);
    expect((error as OrqError).code).toBe("BAD_REQUEST");
    expect((error as OrqError).details).toEqual({ field: "items[0].topic", index: 0 });
    const unknown = await client.request("frobnicate").catch((e: unknown) => e);
    expect((unknown as OrqError).code).toBe("UNKNOWN_OP");
  });
});

describe("timeouts, disconnects, reconnects", () => {
  test("a request times out with TIMEOUT; a dequeue's timeout covers its wait_ms (in the client's clock's time)", async () => {
    env.engine.parkDequeues = true;
    const clock = new ManualClientClock();
    const shortClient = await OrqClient.connect({ port: env.port, requestTimeoutMs: 50, clock });
    expect(await shortClient.dequeue("ns1", { topics: [{ topic: "t" }], waitMs: 0 })).toEqual([]); // waitMs 0 never parks
    let settled: unknown = "pending";
    shortClient.dequeue("ns1", { topics: [{ topic: "t" }], waitMs: 10_000 }).then(
      (deliveries) => (settled = deliveries),
      (error: unknown) => (settled = error),
    );
    await untilParked(1); // on the server, which answers only when the test releases it
    clock.advance(10_049); // far past requestTimeoutMs (50), 1 ms short of waitMs + requestTimeoutMs
    await settle();
    expect(settled).toBe("pending");
    clock.advance(20); // past 10,050 and the next sweep (every 10 ms at this timeout)
    await settle();
    expect(settled).toBeInstanceOf(OrqError);
    expect((settled as OrqError).code).toBe("TIMEOUT");
    // The server's late answer finds no one waiting and is dropped; the connection carries on.
    env.engine.releaseWaiters();
    // A plain request's timeout does not grow with a wait_ms field.
    const plain = shortClient.request("dequeue", { ns: "ns1", topics: [{ topic: "t" }], wait_ms: 10_000 }).catch((e: unknown) => e);
    await untilParked(1);
    clock.advance(49);
    await settle();
    expect(Bun.peek.status(plain)).toBe("pending");
    clock.advance(11);
    await settle();
    expect(Bun.peek(plain)).toBeInstanceOf(OrqError);
    expect((Bun.peek(plain) as OrqError).code).toBe("TIMEOUT");
    env.engine.releaseWaiters();
    env.engine.parkDequeues = false;
    expect((await shortClient.ping()).nowMs).toBeGreaterThan(0);
    await shortClient.close();
    expect(clock.pending).toBe(0); // close cancels the sweep
  });

  test("requests in flight when the server goes away reject with DISCONNECTED; reconnect re-sends hello with the token", async () => {
    const tokens = [{ token: "t0ken", namespaces: ["*"] }];
    const first = startInProcessServer({ tokens });
    first.engine.parkDequeues = true;
    const events: string[] = [];
    const c = await OrqClient.connect({ port: first.port, token: "t0ken", reconnectDelayMs: 10, onEvent: (e) => events.push(e.kind) });
    const inFlight = c.dequeue("ns", { topics: [{ topic: "t" }], waitMs: 60_000 }).catch((e: unknown) => e);
    await c.ping();
    const port = first.port;
    first.server.close(); // closes the connection
    const error = await inFlight;
    expect(error).toBeInstanceOf(OrqError);
    expect((error as OrqError).code).toBe("DISCONNECTED");
    // A new server on the same port: the client reconnects and authenticates again.
    let second: InProcessServer<FakeEngine> | null = null;
    while (second === null) {
      try {
        second = startInProcessServer({ port, tokens });
      } catch (listenError) {
        expect(String(listenError)).toMatch(/in use|EADDRINUSE/i); // the old listener is still releasing the port
        await Bun.sleep(10);
      }
    }
    const stats = await c.stats(); // queued until reconnected; needs the re-sent hello
    expect(second.engine.callsOf("stats").at(-1)!.args[0]).toBeNull(); // every namespace
    expect(stats.namespaces).toEqual({});
    expect(events).toContain("reconnected");
    await c.close();
    second.stop();
  });

  test("reconnect delays double from reconnectDelayMs up to reconnectDelayMsMax, each at 50-100% (in the client's clock's time)", async () => {
    const lone = startInProcessServer();
    const clock = new ManualClientClock();
    const failedDelaysMs: number[] = [];
    let disconnected = false;
    const c = await OrqClient.connect({
      port: lone.port,
      clock,
      reconnectDelayMs: 100,
      reconnectDelayMsMax: 400,
      onEvent: (event) => {
        if (event.kind === "disconnected") disconnected = true;
        if (event.kind === "reconnect_failed") failedDelaysMs.push(event.delayMs);
      },
    });
    lone.stop(); // nothing listens on the port any more: every attempt is refused
    // The drop and each refusal arrive over real sockets; the client schedules its next attempt as it hears them.
    while (!disconnected) await Bun.sleep(1);
    for (let attempt = 1; attempt <= 5; attempt++) {
      clock.advance(400); // the longest a delay can be: the next attempt starts
      while (failedDelaysMs.length < attempt) await Bun.sleep(1);
    }
    // Each event carries the delay that came before its attempt: 100, 200, then 400 capped, each scaled by 0.5-1.
    const bounds: Array<[number, number]> = [[50, 100], [100, 200], [200, 400], [200, 400], [200, 400]];
    expect(failedDelaysMs.length).toBe(bounds.length);
    for (const [i, [lowMs, highMs]] of bounds.entries()) {
      expect(failedDelaysMs[i]).toBeGreaterThanOrEqual(lowMs);
      expect(failedDelaysMs[i]).toBeLessThanOrEqual(highMs);
    }
    await c.close();
    expect(clock.pending).toBe(0); // close cancels the waiting reconnect
  });

  test("after close, calls reject with CLOSED", async () => {
    const c = await OrqClient.connect({ port: env.port });
    await c.close();
    const error = await c.ping().catch((e: unknown) => e);
    expect((error as OrqError).code).toBe("CLOSED");
  });

  test("connect fails clearly when nothing listens, and with a wrong token", async () => {
    const error = await OrqClient.connect({ port: 1, connectTimeoutMs: 1000 }).catch((e: unknown) => e);
    expect((error as OrqError).code).toBe("DISCONNECTED");
    const secured = startInProcessServer({ tokens: [{ token: "right", namespaces: ["*"] }] });
    const denied = await OrqClient.connect({ port: secured.port, token: "wrong" }).catch((e: unknown) => e);
    expect((denied as OrqError).code).toBe("UNAUTHORIZED");
    secured.stop();
  });
});
