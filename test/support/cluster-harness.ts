// Real orq cluster nodes for end-to-end tests: each node is an `orq serve
// --store postgres://...` child process (ServerProcess) on a free port, all on
// one database of the shared test PostgreSQL (postgres-server.ts).
//   const cluster = await ClusterHarness.start({ label: "kill", nodes: 3 });
//   const client = await cluster.client(0);           // OrqClient to node 0
//   await cluster.waitFor((map) => ...);               // poll the `cluster` op until true
//   await cluster.nodes[1].stop("SIGKILL");
//   await cluster.cleanup();
// In a describe, clusterPerTest() shares the test PostgreSQL and stops the
// cluster each test started (clusters.start(...)) after it.
// Waiting polls the map (a condition), never a fixed sleep; a wait gives up
// after waitMsMax so a broken cluster fails the test instead of hanging it.

import { afterAll, afterEach, beforeAll } from "bun:test";
import { OrqClient } from "../../src/client/client.ts";
import { OrqError } from "../../src/client/orq-error.ts";
import { ServerProcess } from "./server-process.ts";
import { releasePostgres, sharedPostgres, type PostgresServer } from "./postgres-server.ts";

export interface WireMap {
  map_version: number;
  node_id: string;
  nodes: Array<{ node_id: string; addr: string }>;
  owners: Array<string | null>;
}

/** Call again while the answer is UNAVAILABLE (a shard being taken on), after its hint, as clients do; at most 50 tries. */
export async function retrying<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof OrqError) || error.code !== "UNAVAILABLE" || attempt >= 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, error.details.retryAfterMs ?? 100));
    }
  }
}

/**
 * For a describe block: start the shared PostgreSQL before its tests, stop
 * the cluster a test started with `start` after that test (pass or fail),
 * and release PostgreSQL after the last.
 */
export function clusterPerTest(): { start(options: ClusterOptions): Promise<ClusterHarness>; readonly current: ClusterHarness | null } {
  let current: ClusterHarness | null = null;
  beforeAll(async () => {
    await sharedPostgres();
  });
  afterEach(async () => {
    await current?.cleanup();
    current = null;
  });
  afterAll(() => releasePostgres());
  return {
    start: async (options) => (current = await ClusterHarness.start(options)),
    get current() {
      return current;
    },
  };
}

export interface ClusterOptions {
  label: string;
  nodes: number;
  shards?: number;
  leaseMs?: number;
  /** Every node's config file (ServerProcess's `config`), e.g. namespace quotas. */
  config?: Record<string, unknown>;
  /** A server of the test's own (startPostgres()) instead of the shared one, e.g. to crash it. */
  postgres?: PostgresServer;
  /** More arguments for every node, e.g. ["--durability", "relaxed"]. */
  args?: string[];
  /** The --store URL node `index` is given (default the database's own), e.g. one through a TcpProxy. */
  storeUrl?: (index: number, url: string) => string;
}

/** Longest a test waits for the cluster to reach a state (30 s): far past any lease + 2 s bound used here. */
const waitMsMax = 30_000;

export class ClusterHarness {
  readonly nodes: ServerProcess[] = [];
  private nextIndex = 0;
  private readonly clients: OrqClient[] = [];

  private constructor(
    readonly url: string,
    readonly shards: number,
    readonly leaseMs: number,
    /** Every node's config file (ServerProcess's `config`), e.g. namespace quotas. */
    private readonly config: Record<string, unknown> | undefined,
    private readonly storeUrl: (index: number, url: string) => string = (_index, url) => url,
    private readonly args: string[] = [],
  ) {}

  static async start(options: ClusterOptions): Promise<ClusterHarness> {
    const pg = options.postgres ?? (await sharedPostgres());
    const url = await pg.createDatabase(options.label);
    const cluster = new ClusterHarness(url, options.shards ?? 8, options.leaseMs ?? 1500, options.config, options.storeUrl, options.args);
    // The first node creates the schema; the rest start together.
    await cluster.addNode();
    await Promise.all(Array.from({ length: options.nodes - 1 }, () => cluster.addNode()));
    return cluster;
  }

  /** Start one more node (named n<index>). */
  async addNode(): Promise<ServerProcess> {
    const index = this.nextIndex++;
    const node = await ServerProcess.start({
      args: ["--store", this.storeUrl(index, this.url), "--node-id", `n${index}`, "--shards", String(this.shards), "--shard-lease-ms", String(this.leaseMs), ...this.args],
      ...(this.config === undefined ? {} : { config: this.config }),
    });
    this.nodes[index] = node;
    return node;
  }

  nodeId(index: number): string {
    return `n${index}`;
  }

  async client(index: number): Promise<OrqClient> {
    const node = this.nodes[index];
    if (node === undefined) throw new Error(`no node ${index}`);
    const client = await OrqClient.connect({ host: node.host, port: node.port, reconnect: false });
    this.clients.push(client);
    return client;
  }

  /** The map as one node sees it. */
  async map(index: number): Promise<WireMap> {
    const client = await this.client(index);
    try {
      return (await client.request("cluster")).cluster as WireMap;
    } finally {
      await client.close();
    }
  }

  /** Poll node `index`'s map until `done` holds; returns that map. */
  async waitFor(index: number, done: (map: WireMap) => boolean, what: string): Promise<WireMap> {
    const deadline = performance.now() + waitMsMax;
    let last: WireMap | null = null;
    while (performance.now() < deadline) {
      last = await this.map(index);
      if (done(last)) return last;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const logs = this.nodes.map((node, i) => `--- n${i}\n${node.logs().split("\n").slice(-15).join("\n")}`).join("\n");
    throw new Error(`cluster never reached: ${what}; last map ${JSON.stringify(last)}\n${logs}`);
  }

  /** Every shard owned by one of `live` (node ids), none by anyone else, at most ceil(shards / live) each. */
  static balanced(live: string[], shards: number): (map: WireMap) => boolean {
    const share = Math.ceil(shards / live.length);
    return (map) =>
      map.owners.length === shards &&
      map.owners.every((owner) => owner !== null && live.includes(owner)) &&
      live.every((id) => map.owners.filter((owner) => owner === id).length <= share);
  }

  async cleanup(): Promise<void> {
    for (const client of this.clients.splice(0)) await client.close().catch(() => undefined);
    for (const node of this.nodes) await node.cleanup();
  }
}
