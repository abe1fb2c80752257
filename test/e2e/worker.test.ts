// Goal: client.work() against a real server: handlers' successes are acked,
// throws are nacked with the documented back-off (seen in the item's
// deliver_at_ms and attempt), a handler that outlives its lease keeps it
// because the loop extends it, a lost lease aborts the handler's signal,
// concurrency is bounded, and stop() lets running handlers finish (and be
// acked) before it resolves, and dequeues nothing afterwards. No test sleeps
// to wait for a lease: each waits for a worker event it can name.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { OrqClient, type Delivery, type WorkerEvent } from "../../src/client/index.ts";
import { ServerProcess } from "../support/server-process.ts";

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

/** Worker events, and promises that resolve when a matching one arrives (bounded by the test's timeout). */
class Events {
  readonly seen: WorkerEvent[] = [];
  private waiting: Array<{ match: (e: WorkerEvent[]) => boolean; resolve: () => void }> = [];
  readonly listener = (event: WorkerEvent): void => {
    this.seen.push(event);
    this.waiting = this.waiting.filter((w) => {
      if (!w.match(this.seen)) return true;
      w.resolve();
      return false;
    });
  };
  until(match: (seen: WorkerEvent[]) => boolean): Promise<void> {
    if (match(this.seen)) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push({ match, resolve }));
  }
  count(kind: WorkerEvent["kind"]): number {
    return this.seen.filter((e) => e.kind === kind).length;
  }
}

/** A promise the test resolves when it chooses. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

const text = (d: Delivery) => new TextDecoder().decode(d.payload);

describe("client.work", () => {
  test("successes are acked; concurrency bounds the handlers running at once", async () => {
    const ids = await client.enqueue("w1", ["a", "b", "c", "d", "e"].map((payload) => ({ topic: "jobs", payload })));
    const events = new Events();
    const handled: string[] = [];
    let running = 0;
    let runningMax = 0;
    const worker = client.work({ ns: "w1", topic: "jobs", concurrency: 2, leaseMs: 30_000, waitMs: 100, onEvent: events.listener }, async (d) => {
      running++;
      runningMax = Math.max(runningMax, running);
      await Promise.resolve();
      handled.push(text(d));
      running--;
    });
    await events.until((seen) => seen.filter((e) => e.kind === "acked").length === 5);
    await worker.stop();
    expect(handled.sort()).toEqual(["a", "b", "c", "d", "e"]);
    expect(runningMax).toBeLessThanOrEqual(2);
    expect(events.seen.every((e) => e.kind !== "acked" || !e.stale)).toBe(true);
    const states = await client.get("w1", ids);
    expect(states.every((s) => s !== null && s.state === "ended" && s.outcome === "acked")).toBe(true);
  });

  test("a throw is nacked with delay backoffBaseMs * 2^(attempt-1), visible in deliver_at_ms", async () => {
    const [id] = await client.enqueue("w2", [{ topic: "jobs", payload: "boom" }]);
    const events = new Events();
    const worker = client.work(
      { ns: "w2", topic: "jobs", concurrency: 1, leaseMs: 30_000, waitMs: 100, backoffBaseMs: 60_000, onEvent: events.listener },
      () => {
        throw new Error("handler failed");
      },
    );
    await events.until((seen) => seen.some((e) => e.kind === "nacked"));
    await worker.stop();
    const nacked = events.seen.find((e) => e.kind === "nacked");
    expect(nacked).toMatchObject({ kind: "nacked", delayMs: 60_000, stale: false });
    expect(((nacked as { error: Error }).error).message).toBe("handler failed");
    const [state] = await client.get("w2", [id!]);
    if (!state || state.state === "ended") throw new Error(`unexpected state ${JSON.stringify(state)}`);
    expect(state.state).toBe("delayed");
    expect(state.attempt).toBe(1);
    // The nack happened after the enqueue, so the item is held at least the back-off past its enqueue.
    expect(state.deliverAtMs - state.enqueuedAtMs).toBeGreaterThanOrEqual(60_000);
  });

  test("a handler running past its lease keeps it: the loop extends until the handler returns, then acks", async () => {
    const [id] = await client.enqueue("w3", [{ topic: "jobs", payload: "slow" }]);
    const events = new Events();
    const release = gate();
    const started = gate();
    let firstLeaseEndMs = 0;
    const worker = client.work({ ns: "w3", topic: "jobs", concurrency: 1, leaseMs: 800, waitMs: 100, onEvent: events.listener }, async (d) => {
      firstLeaseEndMs = d.leaseExpiresAtMs;
      started.open();
      await release.promise;
    });
    await started.promise;
    // Three extensions at half the lease: the handler has outlived its first lease by then.
    await events.until((seen) => seen.filter((e) => e.kind === "extended").length >= 3);
    const [during] = await client.get("w3", [id!]);
    if (!during || during.state === "ended") throw new Error("the item ended while its handler ran");
    expect(during.state).toBe("leased");
    expect(during.attempt).toBe(1);
    expect(during.leaseExpiresAtMs!).toBeGreaterThan(firstLeaseEndMs);
    release.open();
    await events.until((seen) => seen.some((e) => e.kind === "acked"));
    await worker.stop();
    expect(events.seen.find((e) => e.kind === "acked")).toMatchObject({ stale: false });
    expect(events.count("lease_lost")).toBe(0);
    expect((await client.get("w3", [id!]))[0]).toEqual({ id: id!, state: "ended", outcome: "acked" });
  });

  test("a lost lease (item cancelled) aborts the handler's signal; its ack is reported stale", async () => {
    const [id] = await client.enqueue("w4", [{ topic: "jobs", payload: "doomed" }]);
    const events = new Events();
    const started = gate();
    let aborted = false;
    const worker = client.work({ ns: "w4", topic: "jobs", concurrency: 1, leaseMs: 1000, waitMs: 100, onEvent: events.listener }, async (_d, { signal }) => {
      started.open();
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      aborted = signal.aborted;
    });
    await started.promise;
    expect((await client.cancel("w4", [id!])).cancelled).toBe(1);
    await events.until((seen) => seen.some((e) => e.kind === "acked"));
    await worker.stop();
    expect(aborted).toBe(true);
    expect(events.count("lease_lost")).toBe(1);
    expect(events.seen.find((e) => e.kind === "acked")).toMatchObject({ stale: true });
  });

  test("stop() waits for running handlers, acks them, and dequeues nothing more", async () => {
    const ids = await client.enqueue("w5", [{ topic: "jobs", payload: "1" }, { topic: "jobs", payload: "2" }]);
    const events = new Events();
    const release = gate();
    let startedCount = 0;
    const bothStarted = gate();
    const worker = client.work({ ns: "w5", topic: "jobs", concurrency: 2, leaseMs: 30_000, waitMs: 100, onEvent: events.listener }, async () => {
      startedCount++;
      if (startedCount === 2) bothStarted.open();
      await release.promise;
    });
    await bothStarted.promise;
    let stopped = false;
    const stopping = worker.stop().then(() => {
      stopped = true;
    });
    // While the handlers are held, stop() cannot have resolved, and nothing was acked yet.
    await client.ping();
    expect(stopped).toBe(false);
    expect(worker.running).toBe(2);
    expect(events.count("acked")).toBe(0);
    release.open();
    await stopping;
    expect(events.count("acked")).toBe(2);
    expect(worker.running).toBe(0);
    const states = await client.get("w5", ids);
    expect(states.every((s) => s !== null && s.state === "ended" && s.outcome === "acked")).toBe(true);
    // After stop, an item enqueued stays ready: the loop no longer dequeues.
    const [late] = await client.enqueue("w5", [{ topic: "jobs", payload: "late" }]);
    await client.ping();
    expect((await client.get("w5", [late!]))[0]).toMatchObject({ state: "ready", attempt: 0 });
    await worker.done;
  });

  test("capabilities are sent with each dequeue: only matching items are taken", async () => {
    const [gpuId, plainId] = await client.enqueue("w6", [
      { topic: "jobs", payload: "gpu", requires: { gpu: true } },
      { topic: "jobs", payload: "cpu", requires: { gpu: false } },
    ]);
    const events = new Events();
    const worker = client.work(
      { ns: "w6", topic: "jobs", concurrency: 1, leaseMs: 30_000, waitMs: 100, capabilities: { gpu: true }, onEvent: events.listener },
      () => {},
    );
    await events.until((seen) => seen.some((e) => e.kind === "acked"));
    await worker.stop();
    const [gpu, plain] = await client.get("w6", [gpuId!, plainId!]);
    expect(gpu).toEqual({ id: gpuId!, state: "ended", outcome: "acked" });
    expect(plain).toMatchObject({ state: "ready" });
  });

  test("bad options throw at once: concurrency 0 and 1001 (limit 1000 accepted)", async () => {
    const options = { ns: "w7", topic: "jobs", leaseMs: 1000, waitMs: 0 };
    expect(() => client.work({ ...options, concurrency: 0 }, () => {})).toThrow(RangeError);
    expect(() => client.work({ ...options, concurrency: 1001 }, () => {})).toThrow(RangeError);
    expect(() => client.work({ ...options, concurrency: 1, leaseMs: 0 }, () => {})).toThrow(RangeError);
    const worker = client.work({ ...options, concurrency: 1000 }, () => {});
    await worker.stop();
  });
});
