// Enqueue and drain through a cluster of 1, 2 and 3 orq nodes on one local
// PostgreSQL (test/support's, fsync on), all on this machine: ITEMS items of
// 100 bytes are enqueued in batches of 100 by 8 concurrent loops through the
// cluster client (which spreads them over the nodes), then drained by 8 loops
// that dequeue 100 at a time and ack each batch. Prints items/s per phase.
// On one box the nodes and PostgreSQL share two cores, so this measures the
// cost per item, not scaling. Each node count runs ROUNDS times on a fresh
// database, and the median and range are printed: one round's spread on this
// box is too wide to quote alone.
// Run: ./node_modules/.bin/bun bench/probes/cluster-throughput.ts [items] [rounds]

import { OrqClusterClient } from "../../src/client/cluster-client.ts";
import { ServerProcess } from "../../test/support/server-process.ts";
import { startPostgres } from "../../test/support/postgres-server.ts";

const items = Number(process.argv[2] ?? 20_000);
const rounds = Number(process.argv[3] ?? 3);
const batch = 100;
const loops = 8;
const shards = 16;
const pg = await startPostgres({ fsync: true });
const payload = new Uint8Array(100).fill(7);

interface RoundRates {
  enqueuePerS: number;
  drainPerS: number;
}

async function runRound(nodeCount: number, round: number): Promise<RoundRates> {
  const url = await pg.createDatabase(`throughput_${nodeCount}_${round}`);
  const args = (i: number) => ["--store", url, "--node-id", `n${i}`, "--shards", String(shards), "--shard-lease-ms", "5000", "--log-level", "warn"];
  const nodes = [await ServerProcess.start({ args: args(0) })];
  for (let i = 1; i < nodeCount; i++) nodes.push(await ServerProcess.start({ args: args(i) }));
  const client = await OrqClusterClient.connect({ host: nodes[0]!.host, port: nodes[0]!.port });
  // Wait until every node owns its share (a node still loading answers UNAVAILABLE, which the client waits out anyway).
  for (;;) {
    await client.refresh();
    const map = (client as unknown as { map: { owners: Array<string | null> } }).map;
    if (new Set(map.owners).size === nodeCount && !map.owners.includes(null)) break;
    await Bun.sleep(100);
  }
  let enqueued = 0;
  const enqueueStart = performance.now();
  await Promise.all(
    Array.from({ length: loops }, async () => {
      while (enqueued < items) {
        enqueued += batch;
        await client.enqueue("bench", Array.from({ length: batch }, () => ({ topic: "t", payload })));
      }
    }),
  );
  const enqueueS = (performance.now() - enqueueStart) / 1000;
  let drained = 0;
  const drainStart = performance.now();
  await Promise.all(
    Array.from({ length: loops }, async () => {
      while (drained < enqueued) {
        const got = await client.dequeue("bench", { topics: [{ topic: "t", count: batch }], waitMs: 100 });
        if (got.length === 0) continue;
        await client.ack("bench", got.map((d) => d.receipt));
        drained += got.length;
      }
    }),
  );
  const drainS = (performance.now() - drainStart) / 1000;
  const rates = { enqueuePerS: enqueued / enqueueS, drainPerS: drained / drainS };
  console.log(
    `${nodeCount} node(s), round ${round + 1}: enqueue ${perS(rates.enqueuePerS)} items/s, ` +
      `drain (dequeue + ack) ${perS(rates.drainPerS)} items/s (${enqueued} items)`,
  );
  await client.close();
  for (const node of nodes) await node.cleanup();
  return rates;
}

function perS(rate: number): string {
  return Math.round(rate).toLocaleString("en-US");
}

function spread(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  return `median ${perS(median)} (range ${perS(sorted[0]!)}-${perS(sorted[sorted.length - 1]!)})`;
}

try {
  for (const nodeCount of [1, 2, 3]) {
    const results: RoundRates[] = [];
    for (let round = 0; round < rounds; round++) results.push(await runRound(nodeCount, round));
    console.log(
      `${nodeCount} node(s), ${rounds} rounds: enqueue ${spread(results.map((r) => r.enqueuePerS))} items/s, ` +
        `drain ${spread(results.map((r) => r.drainPerS))} items/s`,
    );
  }
} finally {
  pg.stop();
}
