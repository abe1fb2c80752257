// Goal: the delivery prefetch (src/engine/ready/delivery-prefetch.ts) is only a
// read-ahead of the store, never a reservation: against a real `orq serve`
// on LMDB, a higher-priority item enqueued after a dequeue had the next
// lower ones prefetched is delivered first, and a prefetched item is
// delivered once, to one worker, in delivery order.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { OrqClient } from "../../src/client/index.ts";
import { ServerProcess } from "../support/server-process.ts";

let server: ServerProcess;

beforeAll(async () => {
  server = await ServerProcess.start({ args: ["--shards", "2"] });
});

afterAll(async () => {
  await server?.cleanup();
});

async function prefetchedKeys(): Promise<number> {
  const line = server.stdoutLines.find((l) => l.startsWith("orq http on "));
  const match = line === undefined ? null : /^orq http on (.+):(\d+)$/.exec(line);
  if (match === null) throw new Error("no http line");
  const text = await (await fetch(`http://${match[1]}:${match[2]}/metrics`)).text();
  const sample = /^orq_delivery_prefetch_keys_total (\d+)/m.exec(text);
  return sample === null ? 0 : Number(sample[1]);
}

describe("delivery prefetch", () => {
  test("a higher-priority item enqueued after a prefetch is delivered before the prefetched lower ones", async () => {
    const a = await OrqClient.connect({ port: server.port });
    const b = await OrqClient.connect({ port: server.port });
    try {
      const low = await a.enqueue("pf", Array.from({ length: 40 }, (_, i) => ({ topic: "t", priority: 50, payload: `low-${i}` })));
      const before = await prefetchedKeys();
      // Eight: a dequeue of fewer asks for nothing (deliveryPrefetch.dequeueCountMin).
      const first = await a.dequeue("pf", { topics: [{ topic: "t", count: 8 }] });
      expect(first.map((d) => d.id)).toEqual(low.slice(0, 8));
      // The dequeue asked for the next low items of the heaps it took from.
      expect(await prefetchedKeys()).toBeGreaterThan(before);

      const [urgent] = await b.enqueue("pf", [{ topic: "t", priority: 1, payload: "urgent" }]);
      const next = await b.dequeue("pf", { topics: [{ topic: "t", count: 3 }] });
      expect(next.map((d) => d.id)).toEqual([urgent as string, ...low.slice(8, 10)]);
      expect(new TextDecoder().decode(next[0]?.payload)).toBe("urgent");

      // Every item once, to one worker, in order: the rest come out after, none twice.
      const rest = await a.dequeue("pf", { topics: [{ topic: "t", count: 100 }] });
      expect(rest.map((d) => d.id)).toEqual(low.slice(10));
      const delivered = [...first, ...next, ...rest].map((d) => d.id);
      expect(new Set(delivered).size).toBe(41);
      await a.ack("pf", [...first, ...rest].map((d) => d.receipt));
      await b.ack("pf", next.map((d) => d.receipt));
    } finally {
      await a.close();
      await b.close();
    }
  });
});
