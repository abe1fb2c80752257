// Goal: in the worker loop a slot frees as its ack or nack leaves, not when
// the answer comes back (docs/decisions/048-ack-frees-the-slot.md): the next
// dequeue is sent while the ack is still unanswered, and
// the deliveries held (handlers running, or acks and nacks unanswered) stay
// within twice `concurrency`; stop() still waits for every answer. A fake
// WorkerClient stands in for the server, holding each ack's answer until the
// test releases it.

import { expect, test } from "bun:test";
import type { Delivery } from "../../src/client/types.ts";
import { startWorker, type WorkerClient } from "../../src/client/worker.ts";

function delivery(n: number): Delivery {
  return { id: `i${n}`, topic: "jobs", priority: 0, payload: new Uint8Array(), metadata: new Uint8Array(), attempt: 1, receipt: `i${n}:1:1`, leaseExpiresAtMs: 0, enqueuedAtMs: 0 };
}

/** A server with an endless supply of items that answers acks and nacks only when told to; `log` is what it was sent, in order. */
function heldServer() {
  const log: string[] = [];
  const answers: Array<() => void> = [];
  let next = 0;
  let requested = 0;
  const client: WorkerClient = {
    async dequeue(_ns, request) {
      const count = request.topics[0]!.count ?? 1;
      requested += count;
      log.push(`dequeue ${count}`);
      return Array.from({ length: count }, () => delivery(next++));
    },
    ack(_ns, receipts) {
      log.push(`ack ${receipts.join(",")}`);
      return new Promise((resolve) => answers.push(() => resolve({ acked: receipts.length, stale: [] })));
    },
    nack(_ns, items) {
      log.push(`nack ${items.map((item) => item.receipt).join(",")}`);
      return new Promise((resolve) => answers.push(() => resolve({ nacked: items.length, stale: [] })));
    },
    async extend(_ns, items) {
      return { extended: items.length, stale: [] };
    },
  };
  return {
    client,
    log,
    get delivered() {
      return next;
    },
    get requested() {
      return requested;
    },
    /** Answers every ack and nack sent so far. */
    answerAll() {
      for (const answer of answers.splice(0)) answer();
    },
    get unanswered() {
      return answers.length;
    },
  };
}

/** Stops the worker, answering its acks and nacks until none is left out, and waits for stop() to resolve. */
async function stopAnswering(server: ReturnType<typeof heldServer>, worker: ReturnType<typeof startWorker>): Promise<void> {
  const stopped = worker.stop();
  for (let i = 0; i < 10 && server.unanswered > 0; i++) {
    server.answerAll();
    await settle();
  }
  server.answerAll();
  await stopped;
}

/** Lets the loop run until it has nothing left to do but wait. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Bun.sleep(0);
}

test("the next dequeue is sent before the ack is answered", async () => {
  const server = heldServer();
  const worker = startWorker(server.client, { ns: "n", topic: "jobs", concurrency: 1, leaseMs: 10_000, waitMs: 10, trace: false }, () => undefined);
  await settle();
  // Concurrency 1: the first item's ack is unanswered and the second dequeue has gone out anyway.
  expect(server.log.slice(0, 3)).toEqual(["dequeue 1", "ack i0:1:1", "dequeue 1"]);
  expect(server.unanswered).toBeGreaterThanOrEqual(1);
  server.answerAll();
  await stopAnswering(server, worker);
  expect(worker.running).toBe(0);
});

test("deliveries held stay within twice concurrency while no ack is answered; answers let the loop go on", async () => {
  const server = heldServer();
  const concurrency = 3;
  const worker = startWorker(server.client, { ns: "n", topic: "jobs", concurrency, leaseMs: 10_000, waitMs: 10, trace: false }, () => undefined);
  await settle();
  // Every handler returned at once; their acks are out and unanswered: the loop stopped at 2 x concurrency.
  expect(server.delivered).toBe(2 * concurrency);
  expect(server.unanswered).toBe(2 * concurrency);
  expect(worker.running).toBe(0);
  const before = server.delivered;
  server.answerAll();
  await settle();
  expect(server.delivered).toBeGreaterThan(before);
  expect(server.delivered).toBeLessThanOrEqual(before + 2 * concurrency);
  // stop() resolves only once the acks still out are answered.
  let stopped = false;
  const stopping = worker.stop().then(() => {
    stopped = true;
  });
  await settle();
  expect(stopped).toBe(false);
  for (let i = 0; i < 10 && !stopped; i++) {
    server.answerAll();
    await settle();
  }
  await stopping;
  expect(stopped).toBe(true);
  expect(server.unanswered).toBe(0);
});

test("a handler that throws frees its slot as its nack leaves", async () => {
  const server = heldServer();
  const worker = startWorker(server.client, { ns: "n", topic: "jobs", concurrency: 1, leaseMs: 10_000, waitMs: 10, trace: false }, () => {
    throw new Error("boom");
  });
  await settle();
  expect(server.log.slice(0, 3)).toEqual(["dequeue 1", "nack i0:1:1", "dequeue 1"]);
  await stopAnswering(server, worker);
});

test("an ack that throws before returning a promise is reported and still frees the slot", async () => {
  const server = heldServer();
  const events: string[] = [];
  server.client.ack = () => {
    throw new Error("no socket");
  };
  // Each failed ack frees its slot at once: a dequeue that yields keeps the loop from spinning in microtasks.
  const dequeue = server.client.dequeue.bind(server.client);
  server.client.dequeue = async (ns, request) => {
    await Bun.sleep(1);
    return dequeue(ns, request);
  };
  const worker = startWorker(
    server.client,
    { ns: "n", topic: "jobs", concurrency: 1, leaseMs: 10_000, waitMs: 10, trace: false, onEvent: (event) => events.push(event.kind === "error" ? `error ${event.during}` : event.kind) },
    () => undefined,
  );
  for (let i = 0; i < 500 && server.delivered <= 1; i++) await Bun.sleep(2);
  expect(events[0]).toBe("error ack");
  expect(server.delivered).toBeGreaterThan(1);
  await worker.stop();
  expect(worker.running).toBe(0);
});
