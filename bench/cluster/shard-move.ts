// What a shard move costs a cluster node (decisions/038): ITEMS items on one
// `orq serve --store postgres` node, then a second node joins (half the
// shards move to it) or, with --move leave, the second node holds half and
// leaves with SIGTERM (they move back), or, with --move kill, is SIGKILLed
// (the first node takes its shards over once their leases run out: the
// contract serves them within shard_lease_ms + 2 s). Reports how long the adopting node
// took to load its shards (each shard's load from its "shard serving" log
// lines, and the move from its start, a join's process start included, until
// every moved shard served), and the longest event-loop stall meanwhile: the
// longest round trip of a `ping` sent every 5 ms to the first node (which
// keeps serving; with --move leave it is also the one adopting) and to a
// joining node, and of a `get` on a shard the first node kept; and, for
// the noise floor, the first node's longest ping over 3 s before the move.
//   npm run bench:shard-move                          # 1,000,000 items, join, its own PostgreSQL
//   npm run bench:shard-move -- --items 20000 --move leave
//   npm run bench:shard-move -- --move kill                # the takeover after a SIGKILL
//   npm run bench:shard-move -- --dsn postgres://user@host/db   # an existing server (its admin database)

import { parseArgs } from "node:util";
import { SQL } from "bun";
import { OrqClient } from "../../src/client/client.ts";
import { OrqClusterClient } from "../../src/client/cluster-client.ts";
import { startPostgres } from "../../test/support/postgres-server.ts";
import { ServerProcess } from "../../test/support/server-process.ts";

const NAMESPACE = "bench";
const TOPIC = "t";
/** Items per enqueue while loading, and enqueues in flight. */
const BATCH_ITEMS = 1000;
const BATCHES_IN_FLIGHT = 4;
/** How often each probe asks its node. */
const PROBE_EVERY_MS = 5;
/** How long the probe runs before the move, for the machine's noise floor. */
const BASELINE_MS = 3_000;
/** The nodes' --shard-lease-ms. */
const SHARD_LEASE_MS = 5_000;

const { values } = parseArgs({
  options: {
    items: { type: "string", default: "1000000" },
    shards: { type: "string", default: "16" },
    move: { type: "string", default: "join" },
    dsn: { type: "string" },
  },
});
const items = Number(values.items);
const shards = Number(values.shards);
const move = values.move;
if (!Number.isSafeInteger(items) || items < 1 || !Number.isSafeInteger(shards) || shards < 2 || (move !== "join" && move !== "leave" && move !== "kill")) {
  console.error("usage: shard-move.ts [--items N] [--shards S] [--move join|leave|kill] [--dsn postgres://...]");
  process.exit(2);
}

async function database(): Promise<{ url: string; stop(): void }> {
  if (values.dsn === undefined) {
    const server = await startPostgres({ fsync: true });
    return { url: await server.createDatabase("shardmove"), stop: () => server.stop() };
  }
  const name = `orq_shardmove_${process.pid}`;
  const admin = new SQL({ url: values.dsn, max: 1 });
  await admin.unsafe(`CREATE DATABASE "${name}"`);
  await admin.close();
  const url = new URL(values.dsn);
  url.pathname = `/${name}`;
  return { url: url.toString(), stop: () => {} };
}

function nodeArgs(url: string, index: number): string[] {
  return ["--store", url, "--node-id", `n${index}`, "--shards", String(shards), "--shard-lease-ms", String(SHARD_LEASE_MS)];
}

async function owners(client: OrqClient): Promise<Array<string | null>> {
  const map = (await client.request("cluster")).cluster as { owners: Array<string | null> };
  return map.owners;
}

/** Until `done` holds for node `client`'s map (polled every 20 ms). */
async function waitForMap(client: OrqClient, done: (owners: Array<string | null>) => boolean): Promise<Array<string | null>> {
  for (;;) {
    const now = await owners(client);
    if (done(now)) return now;
    await Bun.sleep(20);
  }
}

/** `call` every PROBE_EVERY_MS until stopped, keeping the longest round trip. */
function probe(call: () => Promise<unknown>): { stop(): Promise<number> } {
  let stopped = false;
  let longestMs = 0;
  const loop = (async () => {
    while (!stopped) {
      const started = performance.now();
      await call().catch(() => undefined);
      longestMs = Math.max(longestMs, performance.now() - started);
      await Bun.sleep(PROBE_EVERY_MS);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return longestMs;
    },
  };
}

/** The adopting node's "shard serving" lines since `from`: each shard's load time. */
function servingLines(node: ServerProcess, from: number): number[] {
  return node.stderrLines
    .slice(from)
    .filter((line) => line.includes("shard serving"))
    .map((line) => Number((JSON.parse(line) as { load_ms?: number }).load_ms ?? 0));
}

/** Load through the cluster client, which sends each keyed item to its shard's owner. */
async function load(client: OrqClusterClient): Promise<Map<number, string>> {
  const payload = new Uint8Array(64).fill(7);
  const idOnShard = new Map<number, string>();
  let next = 0;
  const startedMs = performance.now();
  await Promise.all(
    Array.from({ length: BATCHES_IN_FLIGHT }, async () => {
      while (next < items) {
        const from = next;
        next = Math.min(items, next + BATCH_ITEMS);
        const batch = Array.from({ length: next - from }, (_, i) => ({ topic: TOPIC, key: `k${from + i}`, payload }));
        const ids = await client.enqueue(NAMESPACE, batch);
        for (const id of ids) idOnShard.set(Number(id.split(":")[0]), id);
      }
    }),
  );
  console.log(`loaded ${items} items in ${((performance.now() - startedMs) / 1000).toFixed(1)} s`);
  return idOnShard;
}

async function main(): Promise<void> {
  const db = await database();
  const nodes: ServerProcess[] = [];
  try {
    nodes.push(await ServerProcess.start({ args: nodeArgs(db.url, 0) }));
    const c0 = await OrqClient.connect({ host: nodes[0]!.host, port: nodes[0]!.port });
    await waitForMap(c0, (map) => map.every((owner) => owner === "n0"));
    if (move !== "join") {
      nodes.push(await ServerProcess.start({ args: nodeArgs(db.url, 1) }));
      await waitForMap(c0, (map) => map.filter((owner) => owner === "n1").length === shards / 2);
    }
    // Keys spread over every shard (FNV-1a): each shard holds about items / shards.
    const loader = await OrqClusterClient.connect({ host: nodes[0]!.host, port: nodes[0]!.port });
    const idOnShard = await load(loader);
    await loader.close();
    const before = await owners(c0);
    const keptShard = before.indexOf("n0");
    const keptId = idOnShard.get(keptShard);

    const mover = move === "join" ? null : nodes[1]!;
    // The machine's noise floor: the same probe for a while with nothing moving.
    const quiet = probe(() => c0.ping());
    await Bun.sleep(BASELINE_MS);
    const quietMs = await quiet.stop();
    const pings0 = probe(() => c0.ping());
    const gets0 = probe(() => (keptId === undefined ? Promise.resolve() : c0.get(NAMESPACE, [keptId])));
    const startedMs = performance.now();
    let adopter: ServerProcess;
    let linesFrom: number;
    let adoptingPings: { stop(): Promise<number> } | null = null;
    if (move === "join") {
      adopter = await ServerProcess.start({ args: nodeArgs(db.url, 1) });
      nodes.push(adopter);
      linesFrom = 0;
      const cNew = await OrqClient.connect({ host: adopter.host, port: adopter.port });
      adoptingPings = probe(() => cNew.ping());
      await waitForMap(c0, (map) => map.filter((owner) => owner === "n1").length === shards / 2);
      // Served once its "shard serving" lines are all there.
      while (servingLines(adopter, linesFrom).length < shards / 2) await Bun.sleep(10);
    } else {
      adopter = nodes[0]!;
      linesFrom = adopter.stderrLines.length;
      await mover!.stop(move === "leave" ? "SIGTERM" : "SIGKILL");
      await waitForMap(c0, (map) => map.every((owner) => owner === "n0"));
      while (servingLines(adopter, linesFrom).length < shards / 2) await Bun.sleep(10);
    }
    const moveMs = performance.now() - startedMs;
    await Bun.sleep(200);
    const loads = servingLines(adopter, linesFrom);
    const report = {
      items,
      shards,
      move,
      shards_moved: loads.length,
      items_moved_about: Math.round((items * loads.length) / shards),
      move_ms: Math.round(moveMs),
      // A SIGKILL's takeover against the contract's bound.
      takeover_bound_ms: move === "kill" ? SHARD_LEASE_MS + 2000 : null,
      shard_load_ms_sum: loads.reduce((a, b) => a + b, 0),
      shard_load_ms_max: Math.max(...loads),
      n0_ping_ms_max_before_move: Math.round(quietMs),
      n0_ping_ms_max: Math.round(await pings0.stop()),
      n0_kept_shard_get_ms_max: Math.round(await gets0.stop()),
      // The joining node's own loop while it loads (join only; a leaving node is going away).
      n1_ping_ms_max: adoptingPings === null ? null : Math.round(await adoptingPings.stop()),
    };
    console.log(JSON.stringify(report, null, 2));
  } finally {
    for (const node of nodes) await node.stop("SIGKILL").catch(() => undefined);
    db.stop();
  }
}

await main();
// The probes' and the loader's connections would keep the process alive.
process.exit(0);
