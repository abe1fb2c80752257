// Enqueue and drain through a cluster of 1, 2 and 3 orq nodes on one local
// PostgreSQL (test/support's, fsync on), all on this machine: ITEMS items of
// 100 bytes are enqueued in batches of 100 by 8 concurrent loops through the
// cluster client (which spreads them over the nodes), then drained by 8 loops
// that dequeue 100 at a time and ack each batch. Prints items/s per phase.
// On one box the nodes and PostgreSQL share two cores, so this measures the
// cost per item, not scaling.
// Run: ./node_modules/.bin/bun bench/cluster-throughput.ts [items]

import { OrqClusterClient } from "../src/client/cluster-client.ts";
import { ServerProcess } from "../test/support/server-process.ts";
import { startPostgres } from "../test/support/postgres-server.ts";

const items = Number(process.argv[2] ?? 20_000);
const batch = 100;
const loops = 8;
const shards = 16;
const pg = await startPostgres({ fsync: true });
const payload = new Uint8Array(100).fill(7);

for (const nodeCount of [1, 2, 3]) {
  const url = await pg.createDatabase(`throughput_${nodeCount}`);
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
  console.log(
    `${nodeCount} node(s): enqueue ${Math.round(enqueued / enqueueS).toLocaleString("en-US")} items/s, ` +
      `drain (dequeue + ack) ${Math.round(drained / drainS).toLocaleString("en-US")} items/s (${enqueued} items)`,
  );
  await client.close();
  for (const node of nodes) await node.cleanup();
}
pg.stop();
