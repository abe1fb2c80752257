// orq's side of the PostgreSQL comparison: NODES `orq serve --store postgres`
// processes on one database, driven through the cluster client (which routes
// each item to its shard's owner and merges dequeues over the nodes).
//   batched: 8 producers enqueue 100 items per call; 8 consumers dequeue up
//            to 100 (waiting up to 100 ms) and ack each batch in one call.
//   single:  8 producers enqueue one item per call; 8 worker loops (the
//            client's `work`) at concurrency 1 each dequeue one and ack it,
//            the next dequeue leaving with the ack (drainByWorkers).
// Items carry priority 0 (FIFO) or a seeded random priority 0..1000, the
// load generator's sequence (bench/load/priorities.ts), from its start in
// each phase. The warm-up's items go to a topic of their own on the same
// nodes and namespace; the timed run's topic is first used by the timed
// enqueue, as without a warm-up. ORQ_BENCH_MAIN runs
// another checkout's server, as it does for bench:load (a before/after on one
// machine state).

import { OrqClusterClient } from "../../src/client/cluster-client.ts";
import { ServerProcess } from "../../test/support/server-process.ts";
import { Priorities, type PriorityOrder } from "../load/priorities.ts";
import type { WorkerEvent } from "../../src/client/worker.ts";
import { BATCH_ITEMS, LOOPS, PAYLOAD_BYTES, type PairSession, type Phase, type ProcessedLedger, type ShapePair, StallWatch, produce } from "./compare-shapes.ts";

const NAMESPACE = "bench";
/** The timed run's topic, and the warm-up's. */
const TOPICS: Record<Phase, string> = { timed: "t", "warm-up": "warm-up" };
/** Shards per cluster, as bench/probes/cluster-throughput.ts runs it. */
const SHARDS = 16;
/** How long a dequeue waits for an item before the loop looks again. */
const DEQUEUE_WAIT_MS = 100;
/** The single drain's workers' lease: the server's default, as the batched consumers' dequeues leave it. */
const WORKER_LEASE_MS = 30_000;
/** How often the single drain looks at the ledger to see whether it is done. */
const DONE_POLL_MS = 5;
/** Another checkout's src/cli/main.ts, or undefined for this one's. */
const ORQ_MAIN = process.env.ORQ_BENCH_MAIN;

export interface OrqOptions {
  nodes: number;
  order: PriorityOrder;
}

function nodeArgs(url: string, index: number): string[] {
  return ["--store", url, "--node-id", `n${index}`, "--shards", String(SHARDS), "--shard-lease-ms", "5000", "--log-level", "warn"];
}

/** Waits until every node owns a share of the shards, so the run measures a settled cluster. */
async function awaitOwnership(client: OrqClusterClient, nodes: number): Promise<void> {
  for (;;) {
    await client.refresh();
    const map = (client as unknown as { map: { owners: Array<string | null> } }).map;
    if (new Set(map.owners).size === nodes && !map.owners.includes(null)) return;
    await Bun.sleep(100);
  }
}

function payloadFor(index: number): Uint8Array {
  const payload = new Uint8Array(PAYLOAD_BYTES).fill(7);
  new DataView(payload.buffer).setUint32(0, index);
  return payload;
}

function indexOf(payload: Uint8Array): number {
  return new DataView(payload.buffer, payload.byteOffset, payload.byteLength).getUint32(0);
}

/** The priorities of a phase's items by index: the seeded sequence from its start, worked out before the clock starts. */
function prioritiesFor(items: number, order: PriorityOrder): number[] {
  const priorities = new Priorities(order);
  return Array.from({ length: items }, () => priorities.next());
}

/**
 * The single pair's drain: LOOPS worker loops (the client's `work`, as a user
 * runs them), each at concurrency 1, so each dequeue asks for one item, as
 * graphile-worker's pool of LOOPS workers fetches one job each. A worker's
 * slot frees as its ack leaves (docs/decisions/048-ack-frees-the-slot.md),
 * as graphile-worker's worker fetches its next job without waiting for the
 * completion; an item counts once its ack is answered, not stale.
 */
async function drainByWorkers(client: OrqClusterClient, topic: string, ledger: ProcessedLedger, watch: StallWatch, start: number): Promise<number> {
  const errors: unknown[] = [];
  const onEvent = (event: WorkerEvent): void => {
    if (event.kind === "acked" && !event.stale) ledger.record(indexOf(event.delivery.payload));
    else if (event.kind === "error" || event.kind === "nacked") errors.push(event.error);
  };
  const workers = Array.from({ length: LOOPS }, () =>
    client.work({ ns: NAMESPACE, topic, concurrency: 1, leaseMs: WORKER_LEASE_MS, waitMs: DEQUEUE_WAIT_MS, trace: false, onEvent }, () => undefined),
  );
  try {
    while (!ledger.done && errors.length === 0) {
      watch.check();
      await Bun.sleep(DONE_POLL_MS);
    }
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
  }
  if (errors.length > 0) throw new Error(`an orq worker reported an error: ${String(errors[0])}`);
  return ledger.ratePerS(start);
}

export async function openOrqSession(url: string, pair: ShapePair, options: OrqOptions): Promise<PairSession> {
  const nodes: ServerProcess[] = [];
  for (let i = 0; i < options.nodes; i++) nodes.push(await ServerProcess.start({ args: nodeArgs(url, i), main: ORQ_MAIN }));
  const client = await OrqClusterClient.connect({ host: nodes[0]!.host, port: nodes[0]!.port });
  await awaitOwnership(client, options.nodes);
  const perCall = pair === "batched" ? BATCH_ITEMS : 1;
  return {
    enqueue(phase, ledger) {
      const topic = TOPICS[phase];
      const priorityOf = prioritiesFor(ledger.items, options.order);
      return produce(ledger.items, perCall, async (indexes) => {
        await client.enqueue(
          NAMESPACE,
          indexes.map((i) => ({ topic, payload: payloadFor(i), priority: priorityOf[i]! })),
        );
      });
    },
    async drain(phase, ledger) {
      const topic = TOPICS[phase];
      const watch = new StallWatch(ledger);
      const start = performance.now();
      if (pair === "single") {
        const rate = await drainByWorkers(client, topic, ledger, watch, start);
        if (phase === "warm-up") await Bun.sleep(DEQUEUE_WAIT_MS);
        return rate;
      }
      await Promise.all(
        Array.from({ length: LOOPS }, async () => {
          while (!ledger.done) {
            watch.check();
            const got = await client.dequeue(NAMESPACE, { topics: [{ topic, count: perCall }], waitMs: DEQUEUE_WAIT_MS });
            if (got.length === 0) continue;
            // A stale receipt (its lease ran out and the item went back) is not a processed item.
            const { stale } = await client.ack(NAMESPACE, got.map((d) => d.receipt));
            const staleReceipts = new Set(stale);
            for (const delivery of got) if (!staleReceipts.has(delivery.receipt)) ledger.record(indexOf(delivery.payload));
          }
        }),
      );
      const rate = ledger.ratePerS(start);
      // The cluster client answers a dequeue with the first node's deliveries and leaves the
      // other nodes' long polls running: let the warm-up's last ones end before the timed run.
      if (phase === "warm-up") await Bun.sleep(DEQUEUE_WAIT_MS);
      return rate;
    },
    async close() {
      await client.close();
      for (const node of nodes) await node.cleanup();
    },
  };
}
