// Which shards this node serves, decided in the database every node shares
// (orq_shards, orq_nodes; statements in ownership-sql.ts). Each tick renews
// this node's heartbeat and its shards' leases, reads the map, then claims
// shards while it holds fewer than ceil(shards / live nodes) and gives up the
// excess while it holds more. A claimed shard is loaded (onAdopt) before it
// is served; a lost one is dropped (onDrop) at once.
//
// Safety does not rest on clocks: every commit checks the shard rows under
// FOR SHARE (this class is the store's ShardFence), so a node that lost a
// shard cannot change it. Liveness does: a node stops serving a shard on its
// own once its last good renewal (by its own clock, taken before the renewal
// was sent, so never later than the database's) is older than the lease.

import type { Clock } from "../../lib/clock.ts";
import { clusterLimits } from "../../limits.ts";
import type { ShardFence } from "./shard-fence.ts";
import { int8Value, type SqlClient, type SqlRow } from "./sql-client.ts";
import {
  claimSql,
  heartbeatSql,
  leaveSql,
  liveNodesSql,
  nodeRowSql,
  registerNodeSql,
  releaseSql,
  renewSql,
  shardsSql,
} from "./ownership-sql.ts";

export interface ClusterMap {
  /** Grows whenever a shard's owner changes (the sum of the shards' epochs). */
  mapVersion: number;
  /** The answering node. */
  nodeId: string;
  nodes: Array<{ nodeId: string; addr: string }>;
  /** Per shard, the live owner's id or null. */
  owners: Array<string | null>;
}

export interface OwnershipOptions {
  /** A connection pool of its own: renewals must not queue behind commits. */
  client: SqlClient;
  nodeId: string;
  /** host:port clients use to reach this node. */
  addr: string;
  /** This process's cluster-wide boot number (the store's meta.boots). */
  incarnation: number;
  shardCount: number;
  leaseMs: number;
  /** Local time for the node's own view of its leases (monotonic in production). */
  clock: Clock;
  /** Load a claimed shard; it is served once this resolves. */
  onAdopt(shard: number): Promise<void>;
  /** Stop serving a shard now (lost, expired, given up or handed over). */
  onDrop(shard: number, reason: string): void;
  /** Shards to claim first when there is a choice (those read ahead: decisions/050); none when absent. */
  preferredClaims?: () => readonly number[];
}

/** A live node already uses this node id. */
export class NodeIdInUseError extends Error {
  override name = "NodeIdInUseError";
}

// A tick is also when a node sees others join or leave and claims or gives
// up shards, so a long lease must not slow rebalancing or a takeover: ticks
// come every third of the lease, and at least every tickMsMax, and sooner
// when another node's shard lease ends before then (nextTickInMs,
// expiryTickMarginMs).
const { renewalsPerLease, tickMsMax, expiryTickMarginMs, missedRenewalsBeforeReadAhead } = clusterLimits;

interface Held {
  epoch: number;
  /** Local time at which the last successful renewal (or the claim) was sent. */
  renewedAtMs: number;
  /** Loaded and served (false while onAdopt runs). */
  serving: boolean;
}

export class ShardOwnership implements ShardFence {
  readonly nodeId: string;
  /** How often the caller should run tick() (ClusterNode schedules it): a third of the lease, at most tickMsMax. */
  readonly renewIntervalMs: number;
  private readonly held = new Map<number, Held>();
  private current: ClusterMap;
  /** Local time at which the first lease of a shard another node owns runs out, as the last tick read it; null when none does. */
  private othersLeaseEndsAtMs: number | null = null;
  /** At the last tick: shards of other nodes whose owner has stopped renewing, that this node would claim (silentShards). */
  private silent: number[] = [];
  private stopped = false;
  /** The last tick's database error, or null when it went through. */
  lastError: Error | null = null;

  constructor(private readonly options: OwnershipOptions) {
    this.nodeId = options.nodeId;
    this.renewIntervalMs = Math.max(1, Math.min(tickMsMax, Math.floor(options.leaseMs / renewalsPerLease)));
    this.current = { mapVersion: 0, nodeId: options.nodeId, nodes: [], owners: Array.from({ length: options.shardCount }, () => null) };
  }

  /**
   * Join the cluster. A row left by a dead process with this id (its heartbeat
   * older than the lease) is taken over; a live one is waited for up to one
   * lease, and if it keeps beating, this node is refused.
   */
  async register(sleep: (ms: number) => Promise<void>): Promise<void> {
    const { client, nodeId, addr, incarnation, leaseMs } = this.options;
    for (let attempt = 0; attempt < 2; attempt++) {
      const rows = await client.query(registerNodeSql, [nodeId, addr, incarnation, leaseMs]);
      if (rows.length === 1) return;
      if (attempt === 1) break;
      const before = await client.query(nodeRowSql, [nodeId]);
      const agoMs = Number(before[0]?.[0] ?? 0);
      const itsLeaseMs = Number(before[0]?.[1] ?? leaseMs);
      await sleep(Math.max(0, itsLeaseMs - agoMs) + this.renewIntervalMs);
      const after = await client.query(nodeRowSql, [nodeId]);
      if (Number(after[0]?.[0] ?? itsLeaseMs) < agoMs) break; // it beat meanwhile: alive
    }
    throw new NodeIdInUseError(`node id ${nodeId} is in use by a live node (its heartbeat is younger than its shard lease)`);
  }

  heldEpoch(shard: number): number | null {
    const held = this.held.get(shard);
    if (held === undefined) return null;
    if (this.options.clock.nowMs() - held.renewedAtMs >= this.options.leaseMs) {
      this.drop(shard, "its lease ran out without a renewal");
      return null;
    }
    return held.epoch;
  }

  /** Whether this node serves the shard now: held, loaded, and its lease not run out. */
  serving(shard: number): boolean {
    return this.heldEpoch(shard) !== null && this.held.get(shard)?.serving === true;
  }

  lost(shard: number, detail: string): void {
    this.drop(shard, `another node claimed it (${detail})`);
  }

  suspect(shard: number, detail: string): void {
    this.drop(shard, `a commit writing it failed, so it is loaded again from the database (${detail})`);
  }

  /**
   * How long to wait before the next tick: the regular interval, or less when
   * a shard another node owns runs out of lease before then (its owner has
   * stopped renewing), so that shard is claimed as its lease ends
   * (docs/decisions/041-takeover-at-lease-end.md).
   */
  nextTickInMs(): number {
    const endsAtMs = this.othersLeaseEndsAtMs;
    if (endsAtMs === null) return this.renewIntervalMs;
    const untilMs = endsAtMs + expiryTickMarginMs - this.options.clock.nowMs();
    return Math.min(this.renewIntervalMs, Math.max(expiryTickMarginMs, untilMs));
  }

  /**
   * Shards another node owns whose lease has gone `missedRenewalsBeforeReadAhead`
   * renewals without one (their owner is dead, paused or cut off), as many as
   * this node would claim once those owners are gone, its own slice first
   * (see the function below): the shards worth reading ahead (cluster-node.ts).
   * As of the last tick that reached the database.
   */
  silentShards(): number[] {
    return [...this.silent];
  }

  /** The shards this node serves, ascending. */
  servedShards(): number[] {
    return [...this.held.keys()].filter((shard) => this.serving(shard)).sort((a, b) => a - b);
  }

  map(): ClusterMap {
    // A shard whose lease ran out here is not named as this node's, even while its ticks cannot reach the
    // database (they may hang on a silent network): a client reading this map then looks for the owner elsewhere.
    for (const shard of [...this.held.keys()]) this.heldEpoch(shard);
    return { ...this.current, nodes: [...this.current.nodes], owners: [...this.current.owners] };
  }

  /** Renew, drop what was lost, refresh the map, then claim or give up shards toward an even share. */
  async tick(): Promise<void> {
    if (this.stopped) return;
    for (const shard of [...this.held.keys()]) this.heldEpoch(shard);
    const { client, nodeId, incarnation, addr, leaseMs, shardCount } = this.options;
    const sentAtMs = this.options.clock.nowMs();
    const renewing = [...this.held.entries()];
    this.othersLeaseEndsAtMs = null;
    this.silent = [];
    let liveNodes: Array<{ nodeId: string; addr: string }>;
    try {
      const [beat, renewed, shards, nodes] = await client.transaction(
        async (tx) =>
          await tx.pipeline([
            { text: heartbeatSql, params: [nodeId, incarnation, addr] },
            { text: renewSql, params: [nodeId, leaseMs, renewing.map(([shard]) => shard), renewing.map(([, held]) => held.epoch)] },
            { text: shardsSql },
            { text: liveNodesSql },
          ]),
      );
      if (beat === undefined || renewed === undefined || shards === undefined || nodes === undefined) throw new Error("tick: missing result");
      if (beat.length === 0) {
        // Presumed dead and replaced by a process with this id: nothing here is ours.
        for (const shard of [...this.held.keys()]) this.drop(shard, "another process registered this node id");
        this.stopped = true;
        throw new NodeIdInUseError(`node id ${nodeId} was taken over by another process`);
      }
      const renewedShards = new Set(renewed.map((row) => Number(row[0])));
      for (const [shard, held] of renewing) {
        if (this.held.get(shard) !== held) continue;
        if (renewedShards.has(shard)) held.renewedAtMs = sentAtMs;
        else this.drop(shard, "another node claimed it");
      }
      liveNodes = nodes.map((row) => ({ nodeId: String(row[0]), addr: String(row[1]) }));
      this.current = {
        mapVersion: shards.reduce((sum, row) => sum + int8Value(row[2]), 0),
        nodeId,
        nodes: liveNodes,
        owners: shards.map((row) => (row[1] === null ? null : String(row[1]))),
      };
      this.othersLeaseEndsAtMs = othersLeaseEnd(shards, nodeId, sentAtMs);
      this.silent = silentShards(shards, nodeId, leaseMs - missedRenewalsBeforeReadAhead * this.renewIntervalMs, liveNodes, this.held.size, shardCount);
      this.lastError = null;
    } catch (error) {
      if (error instanceof NodeIdInUseError) throw error;
      // Cut off from the database: keep serving until the leases run out locally.
      this.lastError = error as Error;
      return;
    }
    const target = Math.ceil(shardCount / Math.max(1, liveNodes.length));
    try {
      if (this.held.size < target) await this.claim(target - this.held.size);
      else if (this.held.size > target) await this.release([...this.held.keys()].sort((a, b) => b - a).slice(0, this.held.size - target));
    } catch (error) {
      // A shard given up locally but not in the database runs out its lease; one not claimed is tried next tick.
      this.lastError = error as Error;
    }
  }

  /** Leave the cluster now (SIGTERM): stop serving every shard, give them up and delete the node row. */
  async handover(): Promise<void> {
    this.stop();
    await this.release([...this.held.keys()]);
    await this.options.client.query(leaveSql, [this.nodeId, this.options.incarnation]);
  }

  /** Stop ticking: later tick() calls do nothing (the leases then run out on their own). */
  stop(): void {
    this.stopped = true;
  }

  private async claim(count: number): Promise<void> {
    const sentAtMs = this.options.clock.nowMs();
    const rows = await this.options.client.query(claimSql, [this.nodeId, this.options.leaseMs, count, [...(this.options.preferredClaims?.() ?? [])]]);
    const claimed = rows.map((row) => ({ shard: Number(row[0]), epoch: int8Value(row[1]) }));
    // Each claim raised one epoch: the map's version grows with it.
    this.current.mapVersion += claimed.length;
    for (const { shard, epoch } of claimed) {
      this.held.set(shard, { epoch, renewedAtMs: sentAtMs, serving: false });
      this.current.owners[shard] = this.nodeId;
    }
    for (const { shard, epoch } of claimed) {
      try {
        await this.options.onAdopt(shard);
      } catch (error) {
        this.drop(shard, `loading it failed: ${(error as Error).message}`);
        await this.options.client.query(releaseSql, [this.nodeId, [shard], [epoch]]).catch(() => undefined);
        continue;
      }
      const held = this.held.get(shard);
      if (held !== undefined && held.epoch === epoch) held.serving = true;
      else this.options.onDrop(shard, "dropped while it was loading");
    }
  }

  /** Stop serving the shards first, then give them up (the UPDATE waits for any commit still holding their rows). */
  private async release(shards: number[]): Promise<void> {
    const epochs: number[] = [];
    const released: number[] = [];
    for (const shard of shards) {
      const held = this.held.get(shard);
      if (held === undefined) continue;
      released.push(shard);
      epochs.push(held.epoch);
      this.drop(shard, "handed over");
    }
    if (released.length === 0) return;
    const rows = await this.options.client.query(releaseSql, [this.nodeId, released, epochs]);
    this.current.mapVersion += rows.length;
  }

  private drop(shard: number, reason: string): void {
    const held = this.held.get(shard);
    if (held === undefined) return;
    this.held.delete(shard);
    if (this.current.owners[shard] === this.nodeId) this.current.owners[shard] = null;
    if (held.serving) this.options.onDrop(shard, reason);
  }
}

/**
 * The shards of other nodes with less than `silentBelowMs` of lease left, at
 * most as many as this node would claim (an even share of `shardCount` among
 * the live nodes not owning such a shard, less the `held` it has). Each
 * staying node starts from its own slice (every k-th shard from its rank
 * among the k staying nodes' ids), then the rest ascending: nodes that take
 * over together read different shards ahead, and each claims its own first
 * (claimSql), so their reads and filings run side by side.
 */
function silentShards(
  shards: readonly SqlRow[],
  nodeId: string,
  silentBelowMs: number,
  liveNodes: ReadonlyArray<{ nodeId: string }>,
  held: number,
  shardCount: number,
): number[] {
  const silent: number[] = [];
  const silentOwners = new Set<string>();
  for (const row of shards) {
    if (row[1] === null || String(row[1]) === nodeId || row[3] === null || row[3] === undefined) continue;
    if (Number(row[3]) >= silentBelowMs) continue;
    silent.push(Number(row[0]));
    silentOwners.add(String(row[1]));
  }
  const staying = liveNodes.map((node) => node.nodeId).filter((id) => !silentOwners.has(id));
  if (!staying.includes(nodeId)) staying.push(nodeId);
  staying.sort();
  const rank = staying.indexOf(nodeId);
  const mine = silent.filter((_, at) => at % staying.length === rank);
  const rest = silent.filter((_, at) => at % staying.length !== rank);
  return [...mine, ...rest].slice(0, Math.max(0, Math.ceil(shardCount / staying.length) - held));
}

/**
 * When the first lease of a shard another node owns runs out, in local time:
 * `sentAtMs` plus the least time left the database reported. The database
 * read its clock after `sentAtMs`, so this is early by at most the round trip.
 */
function othersLeaseEnd(shards: readonly SqlRow[], nodeId: string, sentAtMs: number): number | null {
  let leftMs = Number.POSITIVE_INFINITY;
  for (const row of shards) {
    if (row[1] === null || String(row[1]) === nodeId || row[3] === null || row[3] === undefined) continue;
    leftMs = Math.min(leftMs, Number(row[3]));
  }
  return Number.isFinite(leftMs) ? sentAtMs + leftMs : null;
}
