// One node of a cluster (orq serve --store postgres://...): the PostgreSQL
// store (loading only the shards this node serves), the group committer, the
// shard ownership (which claims, renews and gives up shards, and fences every
// commit), and the ClusterEngine the server talks to.
//
// open() connects and builds an engine that serves nothing (every request
// needing a shard is answered UNAVAILABLE), so the server can listen and
// learn its port; join() then registers the node under its id and address,
// takes its first shards and serves them. Every renewal interval the node
// ticks its ownership and, whenever the shards it serves differ from those
// its engine holds, moves them: a shard given up leaves the engine, a shard
// taken on loads into it in steps while the others serve
// (ClusterEngine.moveShards). handover() (SIGTERM) stops
// serving, lets the commits land, and gives every shard up at once so the
// other nodes take them on their next tick. Besides, the node polls the
// database for other nodes' pauses and policies (every 250 ms) and for the ends of `after`
// ids on other nodes' shards (every 500 ms), and draws namespace quota tokens
// from the database's buckets every 250 ms (quota-leases.ts), on a connection
// of their own; so are topics' own rate tokens and max_leased slots drawn
// and handed back (topic-bound-leases.ts), on another.

import { Engine } from "../engine/engine.ts";
import type { ShardPlacement } from "../engine/ops/enqueue.ts";
import type { Clock } from "../lib/clock.ts";
import { clusterLimits, type Limits } from "../limits.ts";
import type { WireClusterMap } from "../protocol/wire-types.ts";
import { GroupCommitter } from "../storage/group-commit.ts";
import { enginePauseRows } from "../storage/postgres/pause-rows.ts";
import { enginePolicyRows } from "../storage/postgres/policy-rows.ts";
import { openPostgresStore, type PostgresStore } from "../storage/postgres/postgres-store.ts";
import { ShardOwnership } from "../storage/postgres/shard-ownership.ts";
import { drawQuotaTokens } from "../storage/postgres/quota-rows.ts";
import { connectSql, type SqlClient } from "../storage/postgres/sql-client.ts";
import type { Durability } from "../storage/store.ts";
import { ClusterEngine, type ShardMoves, type ShardRouter } from "./cluster-engine.ts";
import { ClusterWriter } from "./cluster-writer.ts";
import { clusterPlacement } from "./placement.ts";
import { QuotaLeases } from "./quota-leases.ts";
import { TopicBoundLeases } from "./topic-bound-leases.ts";
import { drawRateTokens, moveSlots, shardSlots } from "../storage/postgres/topic-bound-rows.ts";

export interface ClusterNodeOptions {
  url: string;
  /** Shards to create the database with, or null to use what it holds (a new one gets shardsDefault). */
  shards: number | null;
  shardsDefault: number;
  durability: Durability;
  leaseMs: number;
  limits: Limits;
  namespaces: Record<string, { enqueuePerMinute: number | null }>;
  /** Wall time for the engine. */
  clock: Clock;
  /** Monotonic time for leases and commit timings. */
  monotonic: Clock;
  log(event: string, fields: Record<string, unknown>): void;
  /** The node can no longer go on (its id was taken over): the CLI exits. */
  onFatal(error: Error): void;
}

/** The fence before join(): this node holds no shard, so nothing may be written. */
const holdsNothing = { nodeId: "", heldEpoch: (): number | null => null, lost: (): void => {}, suspect: (): void => {} };

export class ClusterNode {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private pollTimer: ReturnType<typeof setTimeout> | null = null;
  private sharedRowsTimer: ReturnType<typeof setTimeout> | null = null;
  private quotaTimer: ReturnType<typeof setTimeout> | null = null;
  private boundsTimer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;
  private ownership: ShardOwnership | null = null;
  private client: SqlClient | null = null;
  /** The connection quota draws use (join() opens it), apart from commits and ownership so neither delays them. */
  private quotaClient: SqlClient | null = null;
  /** The connection topic bounds' draws and hand-backs use (join() opens it), apart from the rest for the same reason. */
  private boundsClient: SqlClient | null = null;
  /** The namespaces' leased quota buckets: the node's, kept apart from the engine's shards. */
  readonly quotas: QuotaLeases;
  /** Topics' own rate tokens and max_leased slots this node holds: the node's, kept apart from the engine's shards. */
  readonly topicBounds: TopicBoundLeases;
  /** Claimed shards whose rows are being read (loadClaimed), with how many loads of each are pending. */
  private readonly loading = new Map<number, number>();
  /** The chain of those loads, one at a time. */
  private loads: Promise<void> = Promise.resolve();
  /** Shards whose read ahead is queued or running (readSilentShardsAhead). */
  private readonly readingAhead = new Set<number>();
  /** The shards the engine holds and serves (a dropped one leaves at once, an adopted one joins once loaded). */
  private built = new Set<number>();
  /** Where keyed and `after` items go, and which ids are on shards the current engine does not hold. */
  private readonly placement: ShardPlacement;
  readonly writer: GroupCommitter;
  readonly engine: ClusterEngine;
  /** The engine's pauses and policies as a poll asks about them (shared-rows.ts). */
  private readonly enginePauses = enginePauseRows({
    pausedUntil: (ns, topic, group) => this.engine.pausedUntil(ns, topic, group),
    writing: (ns, topic, group) => this.engine.pauseWriting(ns, topic, group),
  });
  private readonly enginePolicies = enginePolicyRows({
    storedPolicy: (ns, topic, group) => this.engine.storedPolicy(ns, topic, group),
    writing: (ns, topic, group) => this.engine.policyWriting(ns, topic, group),
  });

  private constructor(
    readonly store: PostgresStore,
    private readonly options: ClusterNodeOptions,
  ) {
    store.fence = holdsNothing;
    this.quotas = new QuotaLeases(
      options.namespaces,
      (draw) => (this.quotaClient === null ? Promise.reject(new Error("the node has not joined the cluster yet")) : drawQuotaTokens(this.quotaClient, draw)),
      options.clock,
    );
    this.writer = new GroupCommitter(store, { clock: options.clock, stopwatch: options.monotonic });
    const boundsClient = (): SqlClient => {
      if (this.boundsClient === null) throw new Error("the node has not joined the cluster yet");
      return this.boundsClient;
    };
    this.topicBounds = new TopicBoundLeases(
      store.shardCount,
      {
        drawRate: async (draw) => await drawRateTokens(boundsClient(), draw),
        moveSlots: async (move) => await moveSlots(boundsClient(), move),
        shardSlots: async (shard) => await shardSlots(boundsClient(), shard),
      },
      options.clock,
      {
        nodeId: () => this.ownership?.nodeId ?? "",
        heldEpoch: (shard) => this.ownership?.heldEpoch(shard) ?? null,
        lost: (shard, detail) => this.ownership?.lost(shard, detail),
        // Only once the engine holds the shard's items: before, its count would say none are leased.
        leased: (ns, topic, shard) => (this.built.has(shard) ? this.engine.sharedLeased(ns, topic, shard) : null),
        policy: (ns, topic) => this.engine.storedPolicy(ns, topic, null),
        released: (ns, topic) => this.engine.sharedBoundReleased(ns, topic, options.clock.nowMs()),
        drain: () => this.writer.drain(),
      },
    );
    const served = (shard: number): boolean => this.built.has(shard) && this.ownership !== null && this.ownership.serving(shard);
    const writer = new ClusterWriter(this.writer, served);
    const router: ShardRouter = { route: (shard) => (served(shard) ? null : this.notServed(shard)) };
    this.placement = clusterPlacement(store.shardCount, (shard) => this.built.has(shard));
    // One engine for the node's life: it starts with no shard (the store loads none before join) and shards move in and out of it.
    const cluster = { placement: this.placement, quotaBuckets: this.quotas.quotaBuckets, topicBounds: this.topicBounds };
    const engine = Engine.recover({ store, writer, limits: options.limits, namespaces: options.namespaces, nowMs: options.clock.nowMs(), cluster });
    engine.onScheduleTickRefused = (ns, name, tickAtMs, message) => options.log("schedule tick refused", { ns, name, tick_at_ms: tickAtMs, message });
    const moves = this.shardMoves();
    this.engine = new ClusterEngine(
      engine,
      router,
      this.placement,
      store.shardCount,
      () => this.writer.drain(),
      (ns, after, limit) => store.readSchedules(ns, after, limit),
      (ns, name) => store.readScheduleShard(ns, name),
      moves,
    );
  }

  /**
   * Whether a claimed shard's rows are being read, shards are moving into or
   * out of the engine, or rows read ahead of a claim are held (the heap
   * governor holds off meanwhile: they are all live, and a full collection
   * would only mark them).
   */
  get shardsMoving(): boolean {
    return this.loading.size > 0 || this.engine.shardsMoving || this.engine.aheadCount > 0 || this.readingAhead.size > 0 || this.store.shardsReadAhead().length > 0;
  }

  /**
   * A claimed shard's rows are read from the database one shard at a time,
   * in claim order, apart from the ownership tick: a tick that awaited them
   * would hold back the next renewal for the whole load, and a join that
   * claims half of a large node's shards could let the node's own leases
   * run out. The ownership counts the shard as served at
   * once; the engine takes it on (shardMoves' target) only once its rows are
   * in and no newer load of it is pending, so a shard lost and claimed again
   * is loaded afresh. A failed load drops the shard (its lease then runs out).
   */
  private loadClaimed(shard: number): void {
    const { store, options } = this;
    const epoch = this.ownership?.heldEpoch(shard) ?? null;
    options.log("shard claimed", { shard });
    this.loading.set(shard, (this.loading.get(shard) ?? 0) + 1);
    this.loads = this.loads.then(async () => {
      try {
        // The slots the shard holds of topics' max_leased come with it (its leased items count against them).
        await this.topicBounds.adoptShard(shard);
        const kept = await store.adoptShard(shard);
        options.log("shard loaded", { shard });
        // A copy the engine filed ahead from any read but the one kept is dropped, and these rows adopted (decisions/053).
        this.engine.aheadClaimed(shard, kept);
        // Lost while its rows came: its slots are not this node's (a claim since loads them again, after this).
        if (this.ownership?.heldEpoch(shard) !== epoch) this.topicBounds.dropShard(shard);
      } catch (error) {
        options.log("shard load failed", { shard, error: (error as Error).message });
        this.ownership?.lost(shard, `loading it failed: ${(error as Error).message}`);
      } finally {
        const pending = (this.loading.get(shard) ?? 1) - 1;
        if (pending > 0) this.loading.set(shard, pending);
        else this.loading.delete(shard);
        this.moveShards();
      }
    });
  }

  /** How shards move into and out of the node's one engine (ClusterEngine.moveShards). */
  private shardMoves(): ShardMoves {
    const { store, options } = this;
    const adoptStartedMs = new Map<number, number>();
    return {
      target: () => (this.ownership === null ? [] : this.ownership.servedShards().filter((shard) => store.hasShard(shard) && !this.loading.has(shard))),
      readAhead: () => store.shardsReadAhead(),
      storedAhead: (shard) => store.storedShardAhead(shard),
      aheadWanted: (shard, read) => this.loading.has(shard) || store.readAheadOf(shard) === read,
      stored: (shard) => {
        adoptStartedMs.set(shard, options.monotonic.nowMs());
        return store.storedShard(shard);
      },
      serve: (shard) => {
        this.built.add(shard);
        options.log("shard serving", { shard, load_ms: Math.round(options.monotonic.nowMs() - (adoptStartedMs.get(shard) ?? 0)) });
      },
      // A shard claimed again meanwhile was loaded afresh by the store (onAdopt): keep that copy.
      forgotten: (shard) => {
        if (this.ownership === null || !this.ownership.serving(shard)) store.dropShard(shard);
      },
      nowMs: () => options.clock.nowMs(),
      stopwatchMs: () => options.monotonic.nowMs(),
      // Two hops: Bun at times runs an immediate queued from an immediate before it reads the sockets, and a
      // request that came during a step then waited for the next one too (pings of 40-48 ms against 20 ms
      // steps; 25 ms with two hops; decisions/049).
      turn: () => new Promise((resolve) => setImmediate(() => setImmediate(resolve))),
    };
  }

  /** Connect to the database (creating the schema if it is empty); the node serves nothing until join(). */
  static async open(options: ClusterNodeOptions): Promise<ClusterNode> {
    const store = await openPostgresStore({
      url: options.url,
      shards: options.shards,
      shardsDefault: options.shardsDefault,
      durability: options.durability,
      keyRangePerOpen: clusterLimits.keyRangePerOpen,
      loadAllShards: false,
      applicationName: "orq",
      transactionIdleTimeoutMs: transactionIdleTimeoutMs(options.leaseMs),
    });
    return new ClusterNode(store, options);
  }

  /** Register as `nodeId` reachable at `addr`, take a fair share of the shards and serve them. */
  async join(nodeId: string, addr: string): Promise<void> {
    const { options, store } = this;
    const client = connectSql({
      url: options.url,
      maxConnections: 2,
      connectTimeoutS: Math.max(1, Math.ceil(options.leaseMs / 1000)),
      settings: { idle_in_transaction_session_timeout: String(transactionIdleTimeoutMs(options.leaseMs)) },
      applicationName: `orq ${nodeId} ownership`,
    });
    this.client = client;
    if (this.quotas.size > 0) {
      this.quotaClient = connectSql({
        url: options.url,
        maxConnections: 2,
        connectTimeoutS: Math.max(1, Math.ceil(options.leaseMs / 1000)),
        // Draws commit with synchronous_commit on whatever the durability: a draw lost in a database crash would hand its tokens out again.
        settings: { statement_timeout: String(clusterLimits.quotaDrawTimeoutMs), synchronous_commit: "on" },
        applicationName: `orq ${nodeId} quotas`,
      });
    }
    this.boundsClient = connectSql({
      url: options.url,
      maxConnections: 2,
      connectTimeoutS: Math.max(1, Math.ceil(options.leaseMs / 1000)),
      // Synchronous commit whatever the durability: a draw of slots or tokens lost in a database crash would hand them out again.
      // A session idle inside a move's transaction is ended after half a lease, as the store's are: it share-locks a shard row.
      settings: {
        statement_timeout: String(clusterLimits.quotaDrawTimeoutMs),
        synchronous_commit: "on",
        idle_in_transaction_session_timeout: String(transactionIdleTimeoutMs(options.leaseMs)),
      },
      applicationName: `orq ${nodeId} topic bounds`,
    });
    const ownership = new ShardOwnership({
      client,
      nodeId,
      addr,
      incarnation: store.meta.boots,
      shardCount: store.shardCount,
      leaseMs: options.leaseMs,
      clock: options.monotonic,
      // Loaded outside the ownership tick (loadClaimed), so renewals go on while a large shard's rows arrive.
      onAdopt: async (shard) => this.loadClaimed(shard),
      // Shards read ahead, or queued to be, are claimed first when a tick has a choice (decisions/050).
      preferredClaims: () => [...store.shardsReadAhead(), ...this.readingAhead],
      onDrop: (shard, reason) => {
        this.built.delete(shard);
        this.engine.shardLost(shard);
        this.topicBounds.dropShard(shard);
        options.log("shard dropped", { shard, reason });
        // Not from inside the commit or tick that noticed: the move waits for commits.
        setTimeout(() => this.moveShards(), 0);
      },
    });
    await ownership.register((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.ownership = ownership;
    store.fence = ownership;
    // The floor of every quota namespace, drawn before the node serves (a failed draw is retried each period).
    await this.quotas.period(options.clock.nowMs());
    await this.step();
    // The first shards are loaded and served before join returns.
    await this.loads;
    await this.engine.moveShards();
    this.schedule();
    this.pollRemoteDependencies();
    this.pollPausesAndPolicies();
    this.drawQuotas();
    this.drawTopicBounds();
  }

  /** The map as hello and the `cluster` op send it. */
  wireMap(): WireClusterMap {
    const map = this.ownership?.map();
    return {
      map_version: map?.mapVersion ?? 0,
      node_id: map?.nodeId ?? "",
      nodes: (map?.nodes ?? []).map((node) => ({ node_id: node.nodeId, addr: node.addr })),
      owners: map?.owners ?? Array.from({ length: this.store.shardCount }, () => null),
    };
  }

  /** SIGTERM: refuse new work, let every commit land, then give every shard up and leave. */
  async handover(): Promise<void> {
    this.stopTicking();
    this.engine.freeze();
    await this.quotas.returnAll(this.options.clock.nowMs());
    await this.topicBounds.returnAll(this.options.clock.nowMs());
    await this.writer.drain();
    if (this.ownership === null) return;
    try {
      await this.ownership.handover();
      this.options.log("shards handed over", {});
    } catch (error) {
      // The database is out of reach: the shards' leases run out on their own and the others take them then.
      this.options.log("handover failed; shards will move when their leases run out", { error: (error as Error).message });
    }
  }

  async close(): Promise<void> {
    this.stopTicking();
    this.ownership?.stop();
    await this.client?.close();
    await this.quotaClient?.close();
    await this.boundsClient?.close();
    await this.store.close();
  }

  private stopTicking(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    if (this.pollTimer !== null) clearTimeout(this.pollTimer);
    if (this.sharedRowsTimer !== null) clearTimeout(this.sharedRowsTimer);
    if (this.quotaTimer !== null) clearTimeout(this.quotaTimer);
    if (this.boundsTimer !== null) clearTimeout(this.boundsTimer);
    this.timer = null;
    this.pollTimer = null;
    this.sharedRowsTimer = null;
    this.quotaTimer = null;
    this.boundsTimer = null;
  }

  /**
   * Every remoteDependencyPollMs: ask the database how the `after` ids on
   * other nodes' shards that this node's items wait on ended, and tell the
   * engine. A failed poll is retried at the next one.
   */
  private pollRemoteDependencies(): void {
    if (this.stopped) return;
    this.pollTimer = setTimeout(() => {
      const ids = this.engine.remoteWaitedOn((id) => this.placement.elsewhere(id), clusterLimits.remoteDependenciesPerPollMax);
      const poll = ids.length === 0 ? Promise.resolve(new Map()) : this.store.remoteEnds(ids);
      poll
        .then((ends) => {
          for (const [id, how] of ends) this.engine.remoteDependencyEnded(id, how, this.options.clock.nowMs());
        })
        .catch((error: unknown) => this.options.log("remote dependency poll failed", { error: (error as Error).message }))
        .finally(() => this.pollRemoteDependencies());
    }, clusterLimits.remoteDependencyPollMs);
  }

  /**
   * Every pausePollMs: read the pause and policy counters and, where another
   * commit moved one, its rows, and make this node's engine match
   * (shared-rows.ts). A failed poll is retried at the next one.
   */
  private pollPausesAndPolicies(): void {
    if (this.stopped) return;
    this.sharedRowsTimer = setTimeout(() => {
      Promise.all([this.store.readPauses(), this.store.readPolicies()])
        .then(([pauses, policies]) => {
          const { engine, store } = this;
          const nowMs = this.options.clock.nowMs();
          for (const { scope, record } of pauses === null ? [] : store.pauses.reconcile(pauses, this.enginePauses)) {
            engine.applyStoredPause(scope.ns, scope.topic, scope.group, record === null ? undefined : record.untilMs, nowMs);
          }
          for (const { scope, record } of policies === null ? [] : store.policies.reconcile(policies, this.enginePolicies)) {
            engine.applyStoredPolicy(scope.ns, scope.topic, scope.group, record, nowMs);
          }
        })
        .catch((error: unknown) => this.options.log("pause and policy poll failed", { error: (error as Error).message }))
        .finally(() => this.pollPausesAndPolicies());
    }, clusterLimits.pausePollMs);
  }

  /**
   * Every quotaDrawPeriodMs: each namespace with a quota draws toward what
   * this node uses, or hands back what it holds beyond that (quota-leases.ts;
   * a failed draw is remembered there and retried at the next period). The
   * first period ran in join(), before the node served.
   */
  private drawQuotas(): void {
    if (this.stopped || this.quotas.size === 0) return;
    this.quotaTimer = setTimeout(() => {
      void this.quotas.period(this.options.clock.nowMs());
      this.drawQuotas();
    }, clusterLimits.quotaDrawPeriodMs);
  }

  /**
   * Every quotaDrawPeriodMs: each topic whose own max_leased or rate this
   * node met draws rate tokens toward its use and hands back idle shards'
   * unused slots (topic-bound-leases.ts; failures are remembered there and
   * retried). Slots are drawn at once when a dequeue needs one, not here.
   */
  private drawTopicBounds(): void {
    if (this.stopped) return;
    this.boundsTimer = setTimeout(() => {
      this.topicBounds.period(this.options.clock.nowMs()).catch((error: unknown) => this.options.log("topic bounds period failed", { error: (error as Error).message }));
      this.drawTopicBounds();
    }, clusterLimits.quotaDrawPeriodMs);
  }

  /** shard_elsewhere (the server answers MOVED) naming the shard's owner, or shard_unserved while it has none (or it is this node, still loading it). */
  private notServed(shard: number): ReturnType<ShardRouter["route"]> {
    const map = this.ownership?.map();
    const owner = map?.owners[shard] ?? null;
    const addr = owner === null ? undefined : map?.nodes.find((node) => node.nodeId === owner)?.addr;
    if (map !== undefined && owner !== null && owner !== map.nodeId && addr !== undefined) {
      return { kind: "shard_elsewhere", message: `shard ${shard} is served by node ${owner} at ${addr}`, moved: { shard, nodeId: owner, addr, mapVersion: map.mapVersion } };
    }
    return { kind: "shard_unserved", message: `shard ${shard} has no live owner yet`, retryAfterMs: clusterLimits.unownedRetryAfterMs };
  }

  /** One ownership tick, then a move when the served shards changed (not waited for: renewals go on while a shard loads). */
  private async step(): Promise<void> {
    const ownership = this.ownership;
    if (ownership === null) return;
    await ownership.tick();
    // A shard claimed and lost again before the engine took it on: the store's copy of it goes.
    for (let shard = 0; shard < this.store.shardCount; shard++) {
      if (this.store.hasShard(shard) && !ownership.serving(shard) && !this.engine.holds(shard) && !this.loading.has(shard)) this.store.dropShard(shard);
    }
    const built = [...this.built].sort((a, b) => a - b);
    const served = ownership.servedShards();
    if (served.length !== built.length || served.some((shard, i) => shard !== built[i])) this.moveShards();
    this.readSilentShardsAhead(ownership.silentShards());
    // Reads ahead to file, or shards filed ahead whose read was let go (decisions/053).
    if (this.engine.aheadCount > 0 || this.store.shardsReadAhead().some((shard) => !this.engine.holds(shard))) this.moveShards();
  }

  /**
   * Read ahead the shards this node would claim once their silent owner's
   * lease runs out, and let go of reads whose owner renewed or that another
   * node claimed (decisions/050). Queued with the loads of claimed shards, one
   * at a time, so a claim's load never waits behind more than the read in progress.
   */
  private readSilentShardsAhead(silent: readonly number[]): void {
    const { store, options } = this;
    const wanted = new Set(silent);
    const readAhead = new Set(store.shardsReadAhead());
    for (const shard of readAhead) if (!wanted.has(shard) && !this.loading.has(shard)) store.forgetShardAhead(shard);
    for (const shard of silent) {
      if (this.readingAhead.has(shard) || store.hasShard(shard) || this.loading.has(shard) || readAhead.has(shard)) continue;
      this.readingAhead.add(shard);
      this.loads = this.loads.then(async () => {
        try {
          // Claimed meanwhile (its load reads it) or no longer silent: nothing to read.
          if (this.loading.has(shard) || this.ownership?.silentShards().includes(shard) !== true) return;
          await store.readShardAhead(shard);
          options.log("shard read ahead", { shard });
          // The engine files it while the owner's lease runs out (decisions/053).
          this.moveShards();
        } catch (error) {
          options.log("shard read ahead failed", { shard, error: (error as Error).message });
        } finally {
          this.readingAhead.delete(shard);
        }
      });
    }
  }

  /** Move the engine's shards to the served ones; a failure there (a broken invariant) stops the node. */
  private moveShards(): void {
    this.engine.moveShards().catch((error: unknown) => this.options.onFatal(error as Error));
  }

  private schedule(): void {
    if (this.stopped || this.ownership === null) return;
    this.timer = setTimeout(() => {
      this.step().then(
        () => this.schedule(),
        (error: unknown) => this.options.onFatal(error as Error),
      );
    }, this.ownership.nextTickInMs());
  }
}

/** PostgreSQL ends a session idle inside a transaction after half a lease: a paused node cannot hold its shard rows locked past its lease. */
function transactionIdleTimeoutMs(leaseMs: number): number {
  return Math.max(100, Math.floor(leaseMs / 2));
}
