// A cluster for tests written in other languages or run outside bun (the
// Python client's, the dashboard's browser tests): starts a PostgreSQL
// (postgres-server.ts) and N orq nodes on it (ServerProcess), prints one JSON
// line {"nodes": [{"host", "port", "pid", "ui"}]} on stdout (ui: the node's
// dashboard URL), and stops everything when its stdin closes. Prints {"skip": "why"} instead when
// PostgreSQL is not installed.
// Run: bun test/support/cluster-fixture.ts [nodes] [shards] [lease ms]

import { startPostgres, postgresAvailable } from "./postgres-server.ts";
import { ServerProcess } from "./server-process.ts";

const nodeCount = Number(process.argv[2] ?? 3);
const shards = Number(process.argv[3] ?? 6);
const leaseMs = Number(process.argv[4] ?? 1500);

if (!postgresAvailable()) {
  process.stdout.write(`${JSON.stringify({ skip: "PostgreSQL is not installed" })}\n`);
  process.exit(0);
}
const pg = await startPostgres();
const url = await pg.createDatabase("fixture");
const args = (i: number) => ["--store", url, "--node-id", `n${i}`, "--shards", String(shards), "--shard-lease-ms", String(leaseMs)];
const nodes = [await ServerProcess.start({ args: args(0) })];
for (let i = 1; i < nodeCount; i++) nodes.push(await ServerProcess.start({ args: args(i) }));
/** The node's dashboard URL (its "orq dashboard on" line), or null when it serves none. */
const dashboardOf = (node: ServerProcess): string | null => {
  for (const line of node.stdoutLines) {
    const match = /^orq dashboard on (\S+)$/.exec(line);
    if (match !== null) return match[1] as string;
  }
  return null;
};
process.stdout.write(`${JSON.stringify({ nodes: nodes.map((node) => ({ host: node.host, port: node.port, pid: node.pid, ui: dashboardOf(node) })) })}\n`);
for await (const _chunk of Bun.stdin.stream()) {
  // Nothing to read: the fixture lives until stdin closes.
}
for (const node of nodes) await node.cleanup();
pg.stop();
