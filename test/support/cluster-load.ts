// A steady load on a real cluster for fault tests, recording everything it
// saw so a test can check exclusivity and durability afterwards:
//   const load = new ClusterLoad(cluster, { topic: "t", leaseMs: 8_000 });
//   await load.start();               // a producer and a consumer per node
//   ... fault ...
//   load.producing = false; await until(() => load.drained()); await load.stop();
//   expect(load.doubleLeases()).toEqual([]);
// Each node gets a producer (batches of 5) and a consumer (dequeue up to 10,
// then ack). Acks go to the node believed to own the receipt's shard: MOVED
// names the owner; a timeout, lost connection or UNAVAILABLE tries the next
// node. Every call is bounded by `callMs` on the client, so a node that hangs
// (one cut off from PostgreSQL) slows only its own loops.

import { OrqClient } from "../../src/client/client.ts";
import { OrqError } from "../../src/client/orq-error.ts";
import type { Delivery } from "../../src/client/types.ts";
import type { ClusterHarness } from "./cluster-harness.ts";

export interface Seen {
  node: number;
  id: string;
  receipt: string;
  leaseExpiresAtMs: number;
  atMs: number;
}

export interface LoadFailure {
  op: string;
  node: number;
  code: string;
  atMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Deliveries of one id that broke exclusivity: a second lease before the
 * first's end, a receipt handed out twice, or any after the ack (`acked`: id
 * -> when its ack was answered ok).
 */
export function doubleLeases(deliveries: readonly Seen[], acked: ReadonlyMap<string, number>): string[] {
  const byId = new Map<string, Seen[]>();
  for (const d of deliveries) byId.set(d.id, [...(byId.get(d.id) ?? []), d]);
  const broken: string[] = [];
  for (const [id, seen] of byId) {
    seen.sort((a, b) => a.atMs - b.atMs);
    const ackedAt = acked.get(id);
    for (let i = 1; i < seen.length; i++) {
      const [a, b] = [seen[i - 1]!, seen[i]!];
      const why = b.receipt === a.receipt ? "same receipt twice" : b.atMs < a.leaseExpiresAtMs ? "second lease inside the first" : null;
      if (why !== null) broken.push(`${id}: ${why}: ${JSON.stringify([a, b])}`);
    }
    for (const d of seen) if (ackedAt !== undefined && d.atMs > ackedAt) broken.push(`${id}: delivered after its ack at ${ackedAt}: ${JSON.stringify(d)}`);
  }
  return broken;
}

export class ClusterLoad {
  /** id -> when its enqueue was answered ok. */
  readonly enqueued = new Map<string, number>();
  readonly deliveries: Seen[] = [];
  /** id -> when its ack was answered ok. */
  readonly acked = new Map<string, number>();
  readonly failures: LoadFailure[] = [];
  producing = true;
  private consuming = true;
  private readonly clients: OrqClient[] = [];
  private readonly loops: Array<Promise<void>> = [];
  /** Receipts waiting for an ack (receipt -> id); taken out while an ack is in flight. */
  private readonly pending = new Map<string, string>();
  /** The node believed to own each shard. */
  private readonly owner = new Map<number, number>();
  private sequence = 0;

  constructor(
    private readonly cluster: ClusterHarness,
    private readonly options: { ns: string; topic: string; leaseMs: number; callMs: number },
  ) {}

  async start(): Promise<void> {
    for (const node of this.cluster.nodes) {
      this.clients.push(await OrqClient.connect({ host: node.host, port: node.port, reconnect: true, requestTimeoutMs: this.options.callMs }));
    }
    for (let node = 0; node < this.clients.length; node++) this.loops.push(this.produce(node), this.consume(node));
    this.loops.push(this.retryAcks());
  }

  async stop(): Promise<void> {
    this.producing = false;
    this.consuming = false;
    await Promise.all(this.loops);
    for (const client of this.clients) await client.close().catch(() => undefined);
  }

  /** Every acknowledged enqueue has been acked by a worker. */
  drained(): boolean {
    for (const id of this.enqueued.keys()) if (!this.acked.has(id)) return false;
    return true;
  }

  /** Deliveries of one id that broke exclusivity (the function doubleLeases). */
  doubleLeases(): string[] {
    return doubleLeases(this.deliveries, this.acked);
  }

  /** Failures by op and code, for a report. */
  failureCounts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const f of this.failures) counts[`${f.op}@n${f.node} ${f.code}`] = (counts[`${f.op}@n${f.node} ${f.code}`] ?? 0) + 1;
    return counts;
  }

  private failed(op: string, node: number, error: unknown): OrqError | null {
    this.failures.push({ op, node, code: error instanceof OrqError ? error.code : "THROWN", atMs: Date.now() });
    return error instanceof OrqError ? error : null;
  }

  private async produce(node: number): Promise<void> {
    const { ns, topic, leaseMs } = this.options;
    while (this.producing) {
      const items = Array.from({ length: 5 }, () => ({ topic, payload: `p${this.sequence++}`, leaseMs }));
      try {
        const ids = await this.clients[node]!.enqueue(ns, items);
        const now = Date.now();
        for (const id of ids) this.enqueued.set(id, now);
        await sleep(20);
      } catch (error) {
        await sleep(this.failed("enqueue", node, error)?.details.retryAfterMs ?? 50);
      }
    }
  }

  private async consume(node: number): Promise<void> {
    const { ns, topic } = this.options;
    while (this.consuming) {
      let got: Delivery[] = [];
      try {
        got = await this.clients[node]!.dequeue(ns, { topics: [{ topic, count: 10 }] });
      } catch (error) {
        await sleep(this.failed("dequeue", node, error)?.details.retryAfterMs ?? 50);
        continue;
      }
      const now = Date.now();
      for (const d of got) {
        this.deliveries.push({ node, id: d.id, receipt: d.receipt, leaseExpiresAtMs: d.leaseExpiresAtMs, atMs: now });
        this.pending.set(d.receipt, d.id);
        if (!this.owner.has(Number(d.id.split(":")[0]))) this.owner.set(Number(d.id.split(":")[0]), node);
      }
      if (got.length > 0) await this.flushAcks();
      else await sleep(20);
    }
  }

  private async retryAcks(): Promise<void> {
    while (this.consuming) {
      await this.flushAcks();
      await sleep(100);
    }
  }

  private async flushAcks(): Promise<void> {
    const byShard = new Map<number, string[]>();
    for (const receipt of this.pending.keys()) {
      const shard = Number(receipt.split(":")[0]);
      byShard.set(shard, [...(byShard.get(shard) ?? []), receipt]);
    }
    await Promise.all([...byShard].map(([shard, receipts]) => this.ackShard(shard, receipts)));
  }

  /**
   * A stale receipt either had its lease run out (the item comes back under a
   * new receipt, acked then) or was acked by an earlier try whose answer was
   * lost (a node cut off after its commit): the item's state says which.
   */
  private async settleStale(node: number, ids: string[]): Promise<void> {
    try {
      const states = await this.clients[node]!.get(this.options.ns, ids);
      const now = Date.now();
      ids.forEach((id, i) => {
        const state = states[i] as { state?: string; outcome?: string } | null;
        if (state?.state === "ended" && state.outcome === "acked") this.acked.set(id, now);
      });
    } catch (error) {
      this.failed("get", node, error);
    }
  }

  private async ackShard(shard: number, receipts: string[]): Promise<void> {
    const node = this.owner.get(shard) ?? shard % this.clients.length;
    const ids = new Map(receipts.map((receipt) => [receipt, this.pending.get(receipt)!]));
    for (const receipt of receipts) this.pending.delete(receipt);
    try {
      const result = await this.clients[node]!.ack(this.options.ns, receipts);
      const now = Date.now();
      const stale = new Set(result.stale);
      for (const [receipt, id] of ids) if (!stale.has(receipt)) this.acked.set(id, now);
      if (stale.size > 0) await this.settleStale(node, [...ids].filter(([receipt]) => stale.has(receipt)).map(([, id]) => id));
    } catch (error) {
      const known = this.failed("ack", node, error);
      if (known?.code === "MOVED" && typeof known.details.nodeId === "string") this.owner.set(shard, Number(known.details.nodeId.slice(1)));
      else this.owner.set(shard, (node + 1) % this.clients.length);
      for (const [receipt, id] of ids) this.pending.set(receipt, id);
    }
  }
}
