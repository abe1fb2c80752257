// What `orq serve` serves from: the single node's LMDB data dir (the default),
// the single node in memory (--store memory: a MemoryStore, nothing on disk),
// or a cluster node on PostgreSQL (--store postgres://...). Both give the
// server an engine and a group committer; a cluster node also joins the
// cluster once the server listens (its default id and address are the port
// it got), and hands its shards over at SIGTERM.

import { ClusterNode } from "../cluster/cluster-node.ts";
import { Engine } from "../engine/engine.ts";
import type { EngineApi } from "../engine/api.ts";
import type { EngineInspector } from "../engine/reads/inspect.ts";
import type { Clock } from "../lib/clock.ts";
import type { Limits } from "../limits.ts";
import type { CommitCounts } from "../storage/postgres/commit-counters.ts";
import type { WireClusterMap } from "../protocol/wire-types.ts";
import type { Logger } from "../server/logger.ts";
import { storageEventLog } from "../server/storage-event-log.ts";
import { GroupCommitter } from "../storage/group-commit.ts";
import { MemoryItems, MemoryNamespaceStore, MemoryNamespaceWriter } from "../storage/memory/memory-namespaces.ts";
import { MemoryStore } from "../storage/memory/memory-store.ts";
import { MemoryWriter } from "../storage/memory/memory-writer.ts";
import type { Writer } from "../storage/writer.ts";
import type { RecentValuesFigures, Store } from "../storage/store.ts";
import type { ServeConfig } from "./config.ts";
import { recoverInTurns } from "./recover-in-turns.ts";
import { RecoveryLog } from "./recovery-log.ts";

/** What the server asks of its writer beyond the engine's Writer: figures for /metrics and the dashboard, and drain at shutdown. */
export type ServedWriter = Writer & Pick<GroupCommitter, "commitStats" | "breakerState">;

export interface ServeBackend {
  engine: EngineApi & { onEarlierDeadline: (() => void) | null; readonly itemCount: number };
  /** The single node's whole engine (item ops for the beanstalkd port); null in cluster mode. */
  local: Engine | null;
  /** The dashboard's inspect queries: the whole engine on a single node, this node's served shards in cluster mode. */
  inspector: EngineInspector;
  /** Cluster mode, once joined: the address other nodes and clients reach this node at (--advertise); null on a single node. */
  readonly advertisedAddr: string | null;
  writer: ServedWriter;
  nodeId: string;
  shards: number;
  clusterMap: (() => WireClusterMap) | null;
  /** Cluster mode: whether shards are being loaded or moved (the heap governor holds off meanwhile); absent on a single node. */
  shardsMoving?: () => boolean;
  /** Cluster mode: what the PostgreSQL store's commits have cost so far (decision 036), for /metrics; null on a single node. */
  postgresCommits: (() => CommitCounts) | null;
  /** Cluster mode: shards read ahead of a takeover, kept and read again (decision 050), for /metrics; null on a single node. */
  shardReadsAhead: (() => { kept: number; readAgain: number }) | null;
  /** Cluster mode: shards filed ahead of a claim, finished or dropped (decision 053), for /metrics; null on a single node. */
  shardsFiledAhead: (() => { finished: number; dropped: number }) | null;
  /** The LMDB store's ring of recent values (storage/lmdb/recent-values.ts): reads it answered and missed, bytes it holds; null without one. */
  recentValues: () => RecentValuesFigures | null;
  /** Fields for the "started" log line. */
  describe: Record<string, unknown>;
  /** Once the server listens on `port`: returns the node id hello reports. */
  afterListen(host: string, port: number): Promise<string>;
  /** SIGTERM, after the server stopped taking work: a cluster node gives its shards up. */
  handover(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The single node, from its opened LMDB store (or its empty in-memory one);
 * namespaces configured `"durability": "memory"` are kept beside it in
 * memory (storage/memory/memory-namespaces.ts): recovery in steps with a turn
 * of the event loop between them and progress in the log (recover-in-turns.ts),
 * storage events in the log.
 */
export async function recoverLocalBackend(store: Store, config: ServeConfig, limits: Limits, clock: Clock, stopwatch: Clock, logger: Logger): Promise<ServeBackend> {
  // --store memory has nothing to commit: its writer applies item writes at once (docs/decisions/035-memory-writer.md).
  const writer = store instanceof MemoryStore && config.store === "memory" ? new MemoryWriter(store) : new GroupCommitter(store, { clock, stopwatch, events: storageEventLog(logger) });
  const recoveryLog = new RecoveryLog(logger, store.storedCounts(), stopwatch.nowMs());
  const split = withMemoryNamespaces(store, writer, config);
  const engine = await recoverInTurns({ store: split.store, writer: split.writer, limits, namespaces: config.namespaces, nowMs: clock.nowMs() }, {
    log: recoveryLog,
    stopwatch,
    turn: () => new Promise<void>((resolve) => setImmediate(resolve)),
  });
  engine.onScheduleTickRefused = (ns, name, tickAtMs, message) => logger.warn("schedule tick refused", { ns, name, tick_at_ms: tickAtMs, message });
  return {
    engine,
    local: engine,
    inspector: engine,
    advertisedAddr: null,
    writer,
    nodeId: store.meta.nodeId,
    shards: store.shardCount,
    clusterMap: null,
    postgresCommits: null,
    shardReadsAhead: null,
    shardsFiledAhead: null,
    recentValues: () => store.recentValuesFigures?.() ?? null,
    describe: config.store === "memory" ? { store: "memory" } : { data_dir: config.dataDir },
    afterListen: async () => store.meta.nodeId,
    handover: async () => {},
    close: () => store.close(),
  };
}

/** The store and writer the engine uses: the durable ones, wrapped when some namespaces are kept in memory beside them. */
function withMemoryNamespaces(store: Store, writer: Writer, config: ServeConfig): { store: Store; writer: Writer } {
  const inMemory = Object.keys(config.namespaces).filter((ns) => config.namespaces[ns]?.durability === "memory");
  // Under --store memory every namespace is in memory already.
  if (inMemory.length === 0 || config.store === "memory") return { store, writer };
  const items = new MemoryItems(store.shardCount, new Set(inMemory));
  return { store: new MemoryNamespaceStore(store, items), writer: new MemoryNamespaceWriter(writer, items) };
}

export async function openClusterBackend(
  config: ServeConfig,
  limits: Limits,
  clock: Clock,
  stopwatch: Clock,
  logger: Logger,
  onFatal: (error: Error) => void,
): Promise<ServeBackend> {
  const node = await ClusterNode.open({
    url: config.store,
    shards: config.shardsGiven ? config.shards : null,
    shardsDefault: config.shards,
    durability: config.durability,
    leaseMs: config.shardLeaseMs,
    limits,
    namespaces: config.namespaces,
    clock,
    monotonic: stopwatch,
    log: (event, fields) => logger.info(event, fields),
    onFatal,
  });
  let nodeId = "";
  let advertisedAddr: string | null = null;
  return {
    engine: node.engine,
    local: null,
    inspector: node.engine.inspector,
    shardsMoving: () => node.shardsMoving,
    get advertisedAddr() {
      return advertisedAddr;
    },
    writer: node.writer,
    get nodeId() {
      return nodeId;
    },
    shards: node.store.shardCount,
    clusterMap: () => node.wireMap(),
    postgresCommits: () => node.store.commitCounts(),
    shardReadsAhead: () => node.store.readAheadCounts(),
    shardsFiledAhead: () => ({ ...node.engine.filedAheadCounts }),
    recentValues: () => null,
    describe: { store: "postgres", shard_lease_ms: config.shardLeaseMs },
    afterListen: async (host, port) => {
      nodeId = config.nodeId === "" ? `${host}:${port}` : config.nodeId;
      const addr = config.advertise === "" ? `${host}:${port}` : config.advertise;
      await node.join(nodeId, addr);
      advertisedAddr = addr;
      logger.info("joined cluster", { node_id: nodeId, addr, shards: node.store.shardCount });
      return nodeId;
    },
    handover: () => node.handover(),
    close: () => node.close(),
  };
}
