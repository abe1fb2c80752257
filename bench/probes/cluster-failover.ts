// Time from a SIGKILL to every shard being served again: 3 orq nodes on one
// local PostgreSQL (test/support's, fsync on), 16 shards; kill one node and
// poll a survivor until, for every shard, its owner answers a `get` for an id
// on that shard (not MOVED, not UNAVAILABLE). Prints the time per run and the
// lease it ran with. The bound is the lease (the dead node's renewals stop)
// plus one tick (<= 1 s) plus loading and rebuilding the shards.
// Run: ./node_modules/.bin/bun bench/probes/cluster-failover.ts [lease ms] [runs]

import { OrqClient } from "../../src/client/client.ts";
import { OrqError } from "../../src/client/orq-error.ts";
import { ServerProcess } from "../../test/support/server-process.ts";
import { startPostgres } from "../../test/support/postgres-server.ts";

const leaseMs = Number(process.argv[2] ?? 5000);
const runs = Number(process.argv[3] ?? 3);
const shards = 16;
const pg = await startPostgres({ fsync: true });

/** Every live node owns a share of the shards (so the one killed has some). */
async function balanced(nodes: ServerProcess[], live: number): Promise<boolean> {
  const client = await OrqClient.connect({ host: nodes[0]!.host, port: nodes[0]!.port, reconnect: false });
  try {
    const map = (await client.request("cluster")).cluster as { owners: Array<string | null> };
    return new Set(map.owners.filter((owner) => owner !== null)).size === live && map.owners.every((owner) => owner !== null);
  } finally {
    await client.close();
  }
}

async function servedEverywhere(nodes: ServerProcess[]): Promise<boolean> {
  const client = await OrqClient.connect({ host: nodes[0]!.host, port: nodes[0]!.port, reconnect: false });
  try {
    const map = (await client.request("cluster")).cluster as { nodes: Array<{ node_id: string; addr: string }>; owners: Array<string | null> };
    for (let shard = 0; shard < shards; shard++) {
      const owner = map.nodes.find((node) => node.node_id === map.owners[shard]);
      if (owner === undefined) return false;
      const [host, port] = owner.addr.split(":");
      // The map may still name the dead node until its lease runs out: refused connections count as not served.
      const probe = await OrqClient.connect({ host, port: Number(port), reconnect: false }).catch((error: unknown) => {
        if (error instanceof OrqError) return null;
        throw error;
      });
      if (probe === null) return false;
      try {
        await probe.get("default", [`${shard}:0`]);
      } catch (error) {
        if (error instanceof OrqError) return false;
        throw error;
      } finally {
        await probe.close();
      }
    }
    return true;
  } finally {
    await client.close();
  }
}

for (let run = 0; run < runs; run++) {
  const url = await pg.createDatabase(`failover_${run}`);
  const args = (i: number) => ["--store", url, "--node-id", `n${i}`, "--shards", String(shards), "--shard-lease-ms", String(leaseMs)];
  const nodes = [await ServerProcess.start({ args: args(0) })];
  nodes.push(...(await Promise.all([1, 2].map((i) => ServerProcess.start({ args: args(i) })))));
  while (!(await balanced(nodes, 3)) || !(await servedEverywhere(nodes))) await Bun.sleep(20);
  const startMs = performance.now();
  await nodes[2]!.stop("SIGKILL");
  while (!(await servedEverywhere(nodes))) await Bun.sleep(20);
  console.log(`lease ${leaseMs} ms: every shard served again ${Math.round(performance.now() - startMs)} ms after SIGKILL`);
  for (const node of nodes) await node.cleanup();
}
pg.stop();
