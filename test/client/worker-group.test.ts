// Goal: the worker loop hands each delivery to its handler as the dequeue
// returned it, its `group` included (and absent for an item without one), so a
// handler can tell whose work it runs; acks go back by receipt as usual.

import { expect, test } from "bun:test";
import type { Delivery } from "../../src/client/types.ts";
import { startWorker, type WorkerClient } from "../../src/client/worker.ts";

function delivery(id: string, group?: string): Delivery {
  const d: Delivery = {
    id,
    topic: "t",
    priority: 0,
    payload: new Uint8Array(),
    metadata: new Uint8Array(),
    attempt: 1,
    receipt: `${id}:1:1`,
    leaseExpiresAtMs: 0,
    enqueuedAtMs: 0,
  };
  if (group !== undefined) d.group = group;
  return d;
}

test("the handler sees each delivery's group", async () => {
  const queued = [delivery("0:1", "acme"), delivery("0:2")];
  const acked: string[] = [];
  const client: WorkerClient = {
    // Hands out what is queued, then answers empty at once (no real long-poll here).
    async dequeue() {
      await Bun.sleep(1);
      return queued.splice(0, queued.length);
    },
    async ack(_ns, receipts) {
      acked.push(...receipts);
      return { acked: receipts.length, stale: [] };
    },
    async nack(_ns, items) {
      return { nacked: items.length, stale: [] };
    },
    async extend(_ns, items) {
      return { extended: items.length, stale: [] };
    },
  };
  const seen: Array<[string, string | undefined]> = [];
  const worker = startWorker(client, { ns: "n", topic: "t", concurrency: 2, leaseMs: 60_000 }, (d) => {
    seen.push([d.id, d.group]);
  });
  while (acked.length < 2) await Bun.sleep(1);
  await worker.stop();
  expect(seen.sort()).toEqual([
    ["0:1", "acme"],
    ["0:2", undefined],
  ]);
  expect(acked.sort()).toEqual(["0:1:1:1", "0:2:1:1"]);
});
