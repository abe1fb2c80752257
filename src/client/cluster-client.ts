// OrqClusterClient: the client for a cluster (docs/CLUSTER.md) that hides it.
// Given any node's address it reads the shard map (hello's `cluster`), sends
// each request to the node owning the shards it names (ids and receipts start
// with `<shard>:`; an item's shard is its group's hash, else its key's, else
// its first `after` id's (item-shard.ts); any other item goes to the nodes in
// turn), splits batches by owner, follows MOVED and a lost connection by
// reading the map again (and sends a shard to the owner a MOVED named while
// the map read is older than that answer), and waits out UNAVAILABLE by its hint. A dequeue asks every node at
// once and answers with the first deliveries to come back; deliveries that
// other nodes return later are kept and handed out by the next dequeue of the
// namespace (their leases run meanwhile). `topics`, `dead`, `list`, `stats`,
// `groups` and `redrive` without ids ask every node and merge
// (cluster-merge.ts, topic-pages.ts, group-pages.ts). `wait` goes, like `get`,
// to each id's owner (one request per node, all at once). `pause`, `resume`,
// `policy`, `policies` and the schedule ops go to one node (the seed while it
// answers): every node shares pauses and policies, and schedules live in the
// shared database, which exactly one node fires them from.
// Against a single node (its `cluster` op answers BAD_REQUEST) it simply
// talks to that node and raises every error as it comes.

import { OrqClient, type AckOptions } from "./client.ts";
import { OrqError } from "./orq-error.ts";
import { decodeListCursor, encodeListCursor, interleaveDead, listDone, listOrder, sumStats } from "./cluster-merge.ts";
import { mergeGroupPages } from "./group-pages.ts";
import { itemShard } from "./item-shard.ts";
import { mergeTopicPages, type TopicPage } from "./topic-pages.ts";
import type {
  ClusterClientOptions,
  Delivery,
  DequeueRequest,
  EndedItemState,
  EnqueueAndWaitResult,
  EnqueueItem,
  GroupPage,
  ItemExplanation,
  ItemPage,
  ItemState,
  PolicyInput,
  PolicyPage,
  PolicyResult,
  ScheduleInput,
  SchedulePage,
} from "./types.ts";
import type { WireMap } from "./transport.ts";
import { startWorker, type WorkerHandle, type WorkHandler, type WorkOptions } from "./worker.ts";
import { shardOfIdOrReceipt } from "../lib/id-grammar.ts";
import { clusterLimits, defaultLimits } from "../limits.ts";

interface ClusterMap {
  map_version: number;
  nodes: Array<{ node_id: string; addr: string }>;
  owners: Array<string | null>;
}

const { clientRouteAttemptsMax: routeAttemptsMax, clientLostNodePauseMs: lostNodePauseMs, clientStickyItems, clientOwnTurnCallItems } = clusterLimits;

/** One node's `stats` reply, or why it has none. */
export interface NodeStats {
  nodeId: string | null;
  addr: string;
  stats: Record<string, unknown> | null;
  error?: string;
}

/** A merged `dead` without a limit stops where one node's would (its page maximum); a `list` page defaults as a node's does. */
const { deadPageMax: deadDefault, listPageDefault: listDefault } = defaultLimits;

const routable = new Set(["MOVED", "UNAVAILABLE", "DISCONNECTED", "CLOSED", "TIMEOUT"]);

/** The shard an id or receipt names, or -1 when the text is neither (it goes to any node, which answers as for any bad id). */
export function shardOf(text: string): number {
  return shardOfIdOrReceipt(text) ?? -1;
}

export class OrqClusterClient {
  private readonly clients = new Map<string, OrqClient>();
  private map: ClusterMap | null = null;
  private shards = 0;
  /** The node `nextAddr` gave last, by its place in the map; each client starts at a random one, so clients started together spread. */
  private turn = Math.floor(Math.random() * 1024);
  /** Where items that name no shard go, and how many went there (stickyAddr). */
  private home: string | null = null;
  private homeItems = 0;
  private readonly stickyItems: number;
  /**
   * Per shard, the owner the last MOVED for it named, with that answer's map
   * version: used while the map read is older, as it is when the node that
   * gave it is cut off from the database and cannot know the new owners.
   */
  private readonly movedTo = new Map<number, { addr: string; mapVersion: number }>();
  private readonly buffered = new Map<string, Delivery[]>();

  private constructor(
    private readonly options: ClusterClientOptions,
    private readonly seed: string,
  ) {
    const sticky = options.stickyItems ?? clientStickyItems;
    if (!Number.isSafeInteger(sticky) || sticky < 1) throw new OrqError("BAD_REQUEST", `stickyItems: must be an integer of 1 or more, got ${sticky}`, { field: "stickyItems" });
    this.stickyItems = sticky;
  }

  /** Connect to any node of the cluster (or a single node). */
  static async connect(options: ClusterClientOptions = {}): Promise<OrqClusterClient> {
    const seed = `${options.host ?? "127.0.0.1"}:${options.port ?? 7420}`;
    const cluster = new OrqClusterClient(options, seed);
    await cluster.refresh();
    return cluster;
  }

  async enqueue(ns: string, items: EnqueueItem[]): Promise<string[]> {
    const ids: string[] = new Array<string>(items.length);
    const placed = items.map((item, index) => ({ item, index, shard: this.map === null ? -1 : itemShard(ns, item, this.shards) }));
    await this.routeBatch(
      placed,
      (entry) => entry.shard,
      async (client, group) => {
        const got = await client.enqueue(ns, group.map((entry) => entry.item));
        group.forEach((entry, i) => (ids[entry.index] = got[i] as string));
      },
      true,
    );
    return ids;
  }

  /** Enqueue (split by owner), then wait up to `waitMs` for every item to end, asking each id's owner (OrqClient.enqueueAndWait). */
  async enqueueAndWait(ns: string, items: EnqueueItem[], waitMs: number): Promise<EnqueueAndWaitResult> {
    const ids = await this.enqueue(ns, items);
    return { ids, items: await this.waitFor(ns, ids, waitMs) };
  }

  /** The `wait` op across the cluster: each id's owner is asked at once for its ids, so the whole wait lasts about `waitMs` at most. */
  async waitFor(ns: string, ids: string[], waitMs: number): Promise<Array<ItemState | EndedItemState | null>> {
    const items: Array<ItemState | EndedItemState | null> = new Array(ids.length).fill(null);
    const indexed = ids.map((id, index) => ({ id, index }));
    await this.routeBatch(indexed, (entry) => shardOf(entry.id), async (client, group) => {
      const got = await client.waitFor(ns, group.map((entry) => entry.id), waitMs);
      group.forEach((entry, i) => (items[entry.index] = got[i] ?? null));
    });
    return items;
  }

  async dequeue(ns: string, request: DequeueRequest): Promise<Delivery[]> {
    // Deliveries kept from an earlier dequeue come first, at most `count` per topic asked.
    const room = new Map(request.topics.map((t) => [t.topic, t.count ?? 1]));
    const kept = this.buffered.get(ns) ?? [];
    const ready: Delivery[] = [];
    const rest: Delivery[] = [];
    for (const d of kept) {
      const left = room.get(d.topic) ?? 0;
      if (left > 0) {
        ready.push(d);
        room.set(d.topic, left - 1);
      } else rest.push(d);
    }
    if (ready.length > 0) {
      this.buffered.set(ns, rest);
      return ready;
    }
    if (this.map === null) return await (await this.client(this.seed)).dequeue(ns, request);
    const addrs = this.nodeAddrs();
    return await new Promise<Delivery[]>((resolve, reject) => {
      let pending = addrs.length;
      let answered = false;
      for (const addr of addrs) {
        void this.client(addr)
          .then((client) => client.dequeue(ns, request))
          .catch((error: unknown) => {
            // A node gone or busy adds nothing this time; any other error is the answer.
            if (!(error instanceof OrqError) || !routable.has(error.code)) {
              if (!answered) reject(error);
              answered = true;
            } else if (error.code !== "UNAVAILABLE" && error.code !== "MOVED") this.forget(addr);
            return [] as Delivery[];
          })
          .then((deliveries) => {
            pending--;
            if (!answered && (deliveries.length > 0 || pending === 0)) {
              answered = true;
              resolve(deliveries);
            } else if (deliveries.length > 0) {
              this.buffered.set(ns, [...(this.buffered.get(ns) ?? []), ...deliveries]);
            }
          });
      }
      if (addrs.length === 0) resolve([]);
    });
  }

  /** Acks split by owner; each receipt's result (options.results, as long as the receipts) goes with it. */
  async ack(ns: string, receipts: string[], options: Pick<AckOptions, "results"> = {}): Promise<{ acked: number; stale: string[] }> {
    const { results } = options;
    // A split would hide a length mismatch from the server's check: refuse it here, as a node would.
    if (results !== undefined && results.length !== receipts.length) throw new OrqError("BAD_REQUEST", "results: must be as long as receipts", { field: "results" });
    const total = { acked: 0, stale: [] as string[] };
    const entries = receipts.map((receipt, index) => ({ receipt, result: results?.[index] }));
    await this.routeBatch(entries, (entry) => shardOf(entry.receipt), async (client, group) => {
      const receiptsOfNode = group.map((entry) => entry.receipt);
      const result = await client.ack(ns, receiptsOfNode, { results: results === undefined ? undefined : group.map((entry) => entry.result) });
      total.acked += result.acked;
      total.stale.push(...result.stale);
    });
    return total;
  }

  async nack(ns: string, items: Array<{ receipt: string; delayMs?: number; metadata?: Uint8Array | string }>): Promise<{ nacked: number; stale: string[] }> {
    const total = { nacked: 0, stale: [] as string[] };
    await this.routeBatch(items, (item) => shardOf(item.receipt), async (client, group) => {
      const result = await client.nack(ns, group);
      total.nacked += result.nacked;
      total.stale.push(...result.stale);
    });
    return total;
  }

  async extend(ns: string, items: Array<{ receipt: string; leaseMs: number; metadata?: Uint8Array | string }>): Promise<{ extended: number; stale: string[] }> {
    const total = { extended: 0, stale: [] as string[] };
    await this.routeBatch(items, (item) => shardOf(item.receipt), async (client, group) => {
      const result = await client.extend(ns, group);
      total.extended += result.extended;
      total.stale.push(...result.stale);
    });
    return total;
  }

  async cancel(ns: string, ids: string[]): Promise<{ cancelled: number; missing: string[] }> {
    const total = { cancelled: 0, missing: [] as string[] };
    await this.routeBatch(ids, shardOf, async (client, group) => {
      const result = await client.cancel(ns, group);
      total.cancelled += result.cancelled;
      total.missing.push(...result.missing);
    });
    return total;
  }

  async get(ns: string, ids: string[]): Promise<Array<ItemState | EndedItemState | null>> {
    const items: Array<ItemState | EndedItemState | null> = new Array(ids.length).fill(null);
    const indexed = ids.map((id, index) => ({ id, index }));
    await this.routeBatch(indexed, (entry) => shardOf(entry.id), async (client, group) => {
      const got = await client.get(ns, group.map((entry) => entry.id));
      group.forEach((entry, i) => (items[entry.index] = got[i] ?? null));
    });
    return items;
  }

  /** Every node's topics summed per topic, one page at a time like OrqClient.topics (topic-pages.ts). */
  async topics(ns: string, query: { prefix?: string; limit?: number; after?: string } = {}): Promise<TopicPage> {
    const answers = await this.everyNode((client) => client.topics(ns, query));
    return mergeTopicPages(answers.flatMap((answer) => (answer.result === null ? [] : [answer.result])), query.limit);
  }

  /** Every node's dead letters of a topic, taken from the nodes in turn (each node's oldest death first), at most `limit` (default 1,000). */
  async dead(ns: string, topic: string, query: { limit?: number } = {}): Promise<ItemState[]> {
    const answers = await this.everyNode((client) => client.dead(ns, topic, query));
    return interleaveDead(answers.map((answer) => answer.result ?? []), query.limit ?? deadDefault);
  }

  /** Redrive the given dead letters on their owners, or (without ids) every node's, summed. */
  async redrive(ns: string, topic: string, ids?: string[]): Promise<{ redriven: number }> {
    let redriven = 0;
    if (ids !== undefined) {
      await this.routeBatch(ids, shardOf, async (client, group) => {
        // Groups run at once: read the total only after this group's answer.
        const got = await client.redrive(ns, topic, group);
        redriven += got.redriven;
      });
    } else {
      for (const answer of await this.everyNode((client) => client.redrive(ns, topic))) redriven += answer.result?.redriven ?? 0;
    }
    return { redriven };
  }

  /**
   * Every node's `stats` and their sum (cluster-merge.ts). A node that did not
   * answer is listed with its error and adds nothing. On a single node,
   * `merged` is its reply.
   */
  async stats(ns?: string): Promise<{ merged: Record<string, unknown>; nodes: NodeStats[] }> {
    const answers = await this.everyNode((client) => client.stats(ns));
    const nodes = answers.map(({ addr, result, error }) => ({ nodeId: this.nodeIdOf(addr), addr, stats: result, error }));
    const replies = answers.flatMap((answer) => (answer.result === null ? [] : [answer.result]));
    return { merged: replies.length === 1 ? (replies[0] as Record<string, unknown>) : sumStats(replies), nodes };
  }

  /**
   * One page of a topic's items from every node: each node gives its next
   * `limit / nodes` items (at least 1) from its own cursor, merged in list
   * order; `next` bundles every node's cursor (cluster-merge.ts). Paging is
   * stable while shards stay on their nodes. On a single node: its page.
   */
  async list(ns: string, topic: string, query: { state?: ItemState["state"]; limit?: number; after?: string } = {}): Promise<ItemPage> {
    if (this.map === null) return await (await this.client(this.seed)).list(ns, topic, query);
    const cursor = query.after === undefined ? {} : decodeListCursor(query.after);
    if (cursor === null) throw new OrqError("BAD_REQUEST", "after: not a cursor of a cluster listing", { field: "after" });
    const perNode = Math.max(1, Math.floor((query.limit ?? listDefault) / Math.max(1, this.nodeAddrs().length)));
    const answers = await this.everyNode(async (client, addr) => {
      const after = cursor[addr];
      if (after === listDone) return { items: [], next: null };
      return await client.list(ns, topic, { state: query.state, limit: perNode, after });
    });
    const next: Record<string, string> = {};
    for (const { addr, result } of answers) next[addr] = result === null ? (cursor[addr] ?? "") : (result.next ?? listDone);
    // A node that did not answer adds nothing: it does not keep the listing going.
    const more = Object.values(next).some((value) => value !== listDone && value !== "");
    const items = answers.flatMap((answer) => answer.result?.items ?? []).sort(listOrder);
    return { items, next: more ? encodeListCursor(Object.fromEntries(Object.entries(next).filter(([, value]) => value !== ""))) : null };
  }

  /** Why each item is not being delivered now, asked of each id's owner; request order, null for an unknown id. */
  async explain(ns: string, ids: string[]): Promise<Array<ItemExplanation | null>> {
    const items: Array<ItemExplanation | null> = new Array(ids.length).fill(null);
    const indexed = ids.map((id, index) => ({ id, index }));
    await this.routeBatch(indexed, (entry) => shardOf(entry.id), async (client, group) => {
      const got = await client.explain(ns, group.map((entry) => entry.id));
      group.forEach((entry, i) => (items[entry.index] = got[i] ?? null));
    });
    return items;
  }

  /**
   * A request that names items by `ids` (`get`, `explain`), answered in wire
   * form: split by owner and re-routed as `get` is, each node's `items` put
   * back in request order (null for an id no node knows). For a caller that
   * shows the server's own reply, the dashboard.
   */
  async requestItems(op: "get" | "explain", ns: string, ids: string[]): Promise<unknown[]> {
    const items: unknown[] = new Array(ids.length).fill(null);
    const indexed = ids.map((id, index) => ({ id, index }));
    await this.routeBatch(indexed, (entry) => shardOf(entry.id), async (client, group) => {
      const reply = await client.request(op, { ns, ids: group.map((entry) => entry.id) });
      const got = Array.isArray(reply.items) ? (reply.items as unknown[]) : [];
      group.forEach((entry, i) => (items[entry.index] = got[i] ?? null));
    });
    return items;
  }

  /** A request any node answers for the whole cluster (the schedule ops, pauses, policies), in wire form, sent as `pause` is. */
  async requestAnyNode(op: string, fields: WireMap): Promise<WireMap> {
    return await this.anyNode((client) => client.request(op, fields));
  }

  /** Pause a topic, or one of its groups, on the whole cluster (any node writes it; every node holds it within 1 s). */
  async pause(ns: string, topic: string, query: { forMs?: number; group?: string } = {}): Promise<{ pausedUntilMs: number | null }> {
    return await this.anyNode((client) => client.pause(ns, topic, query));
  }

  /** Lift a topic's pause, or one group's, on the whole cluster. */
  async resume(ns: string, topic: string, query: { group?: string } = {}): Promise<{ resumed: boolean }> {
    return await this.anyNode((client) => client.resume(ns, topic, query));
  }

  /** Set or clear a policy (OrqClient.policy); any node stores it for the whole cluster. */
  async policy(ns: string, topic: string, input: PolicyInput): Promise<PolicyResult> {
    return await this.anyNode((client) => client.policy(ns, topic, input));
  }

  /** One page of a topic's policies: every node holds them all, so one node answers. */
  async policies(ns: string, topic: string, query: { limit?: number; after?: string } = {}): Promise<PolicyPage> {
    return await this.anyNode((client) => client.policies(ns, topic, query));
  }

  /** Create or replace a schedule (OrqClient.schedule); any node stores it for the whole cluster. */
  async schedule(ns: string, input: ScheduleInput): Promise<{ name: string; nextAtMs: number }> {
    return await this.anyNode((client) => client.schedule(ns, input));
  }

  /** Remove a schedule on the whole cluster. */
  async unschedule(ns: string, name: string): Promise<{ removed: boolean }> {
    return await this.anyNode((client) => client.unschedule(ns, name));
  }

  /** One page of the namespace's schedules: every node reads them all from the shared database, so one node answers. */
  async schedules(ns: string, query: { limit?: number; after?: string } = {}): Promise<SchedulePage> {
    return await this.anyNode((client) => client.schedules(ns, query));
  }

  /** Every node's groups of a topic, one page at a time like OrqClient.groups, counts summed per group (group-pages.ts). */
  async groups(ns: string, topic: string, query: { limit?: number; after?: string } = {}): Promise<GroupPage> {
    const answers = await this.everyNode((client) => client.groups(ns, topic, query));
    return mergeGroupPages(answers.flatMap((answer) => (answer.result === null ? [] : [answer.result])), query.limit);
  }

  /** True when the server is a cluster node (its `cluster` op answered a map). */
  get isCluster(): boolean {
    return this.map !== null;
  }

  /** The worker loop (worker.ts) over the whole cluster. */
  work(options: WorkOptions, handler: WorkHandler): WorkerHandle {
    return startWorker(this, options, handler);
  }

  async close(): Promise<void> {
    for (const client of this.clients.values()) await client.close();
    this.clients.clear();
  }

  /** Read the map from any node that answers (the seed first). */
  async refresh(): Promise<void> {
    const addrs = [this.seed, ...this.nodeAddrs().filter((addr) => addr !== this.seed)];
    let lastError: unknown = null;
    for (const addr of addrs) {
      let client: OrqClient;
      try {
        client = await this.client(addr);
      } catch (error) {
        lastError = error;
        this.forget(addr);
        continue;
      }
      this.shards = client.server?.shards ?? 0;
      try {
        this.map = (await client.request("cluster")).cluster as ClusterMap;
        return;
      } catch (error) {
        // A single node has no map: everything goes to it.
        if (error instanceof OrqError && (error.code === "BAD_REQUEST" || error.code === "UNKNOWN_OP")) {
          this.map = null;
          return;
        }
        lastError = error;
        this.forget(addr);
      }
    }
    throw lastError instanceof Error ? lastError : new OrqError("DISCONNECTED", "no node of the cluster answers");
  }

  /**
   * Ask every node (one at a time, in map order). In a cluster a node gone or
   * busy (the map still names it until its lease runs out) answers null with
   * its error; any other error, or any error of a single node, is thrown.
   */
  private async everyNode<T>(ask: (client: OrqClient, addr: string) => Promise<T>): Promise<Array<{ addr: string; result: T | null; error?: string }>> {
    const answers: Array<{ addr: string; result: T | null; error?: string }> = [];
    for (const addr of this.nodeAddrs()) {
      try {
        answers.push({ addr, result: await ask(await this.client(addr), addr) });
      } catch (error) {
        if (!(error instanceof OrqError) || !routable.has(error.code) || this.map === null) throw error;
        if (error.code !== "MOVED" && error.code !== "UNAVAILABLE") this.forget(addr);
        answers.push({ addr, result: null, error: error.message });
      }
    }
    return answers;
  }

  private nodeIdOf(addr: string): string | null {
    return this.map?.nodes.find((node) => node.addr === addr)?.node_id ?? this.clients.get(addr)?.server?.nodeId ?? null;
  }

  /**
   * One request that any node answers for the whole cluster (pauses and
   * policies), sent to the same node each time: the seed while it answers,
   * else the next in the map. The other nodes take a change up within 1 s,
   * so asking one node lets a caller read back its own pause, resume or
   * policy at once (a resume sent elsewhere could answer `resumed: false`
   * for a pause that node has not seen yet).
   */
  private async anyNode<T>(ask: (client: OrqClient) => Promise<T>): Promise<T> {
    let lastError: unknown = null;
    for (const addr of [this.seed, ...this.nodeAddrs().filter((other) => other !== this.seed)]) {
      try {
        return await ask(await this.client(addr));
      } catch (error) {
        // A single node's errors are its answer; in a cluster a node gone or busy passes the request on.
        if (!(error instanceof OrqError) || !routable.has(error.code) || this.map === null) throw error;
        if (error.code !== "MOVED" && error.code !== "UNAVAILABLE") this.forget(addr);
        lastError = error;
      }
    }
    throw lastError instanceof Error ? lastError : new OrqError("DISCONNECTED", "no node of the cluster answers");
  }

  /**
   * Send `entries` in one request per owning node; re-route the groups MOVED,
   * refused or cut off, until all are done. Entries that name no shard go to
   * any node: with `sticky`, the client's current home (stickyAddr), else the
   * next in turn.
   */
  private async routeBatch<T>(entries: T[], shardOfEntry: (entry: T) => number, send: (client: OrqClient, group: T[]) => Promise<void>, sticky = false): Promise<void> {
    let remaining = entries;
    for (let attempt = 1; remaining.length > 0; attempt++) {
      const groups = new Map<string, T[]>();
      for (const entry of remaining) {
        const addr = this.ownerAddr(shardOfEntry(entry)) ?? "";
        // Appended in place: a copy per entry made a call's routing quadratic in its size.
        const group = groups.get(addr);
        if (group === undefined) groups.set(addr, [entry]);
        else group.push(entry);
      }
      // The entries that named no shard, under "" until now: to one node for the whole call.
      const anyGroup = groups.get("");
      if (anyGroup !== undefined) {
        groups.delete("");
        const anyNode = sticky ? this.stickyAddr(anyGroup.length) : this.nextAddr();
        const group = groups.get(anyNode);
        if (group === undefined) groups.set(anyNode, anyGroup);
        else group.push(...anyGroup);
      }
      const retry: T[] = [];
      let pauseMs = 0;
      await Promise.all(
        [...groups].map(async ([addr, group]) => {
          try {
            await send(await this.client(addr), group);
          } catch (error) {
            // A single node's errors are its answer; only a cluster re-routes.
            if (!(error instanceof OrqError) || !routable.has(error.code) || this.map === null || attempt >= routeAttemptsMax) throw error;
            if (error.code !== "MOVED" && error.code !== "UNAVAILABLE") this.forget(addr);
            // The retry's unplaced entries go elsewhere, and so do the next calls'.
            if (addr === this.home) this.home = null;
            const { shard, addr: owner, mapVersion } = error.details;
            if (error.code === "MOVED" && shard !== undefined && owner !== undefined) this.movedTo.set(shard, { addr: owner, mapVersion: mapVersion ?? 0 });
            pauseMs = Math.max(pauseMs, error.code === "UNAVAILABLE" ? (error.details.retryAfterMs ?? lostNodePauseMs) : error.code === "MOVED" ? 0 : lostNodePauseMs);
            retry.push(...group);
          }
        }),
      );
      remaining = retry;
      if (remaining.length > 0) {
        if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
        await this.refresh().catch(() => undefined);
      }
    }
  }

  private ownerAddr(shard: number): string | null {
    if (this.map === null || shard < 0) return this.map === null ? this.seed : null;
    const moved = this.movedTo.get(shard);
    if (moved !== undefined && moved.mapVersion > this.map.map_version) return moved.addr;
    const owner = this.map.owners[shard] ?? null;
    return this.map.nodes.find((node) => node.node_id === owner)?.addr ?? null;
  }

  private nodeAddrs(): string[] {
    return this.map === null ? [this.seed] : this.map.nodes.map((node) => node.addr);
  }

  private nextAddr(): string {
    const addrs = this.nodeAddrs();
    this.turn = (this.turn + 1) % Math.max(1, addrs.length);
    return addrs[this.turn] ?? this.seed;
  }

  /**
   * The node for a call's `items` items that name no shard: the same one
   * until stickyItems have gone there (a call is never split), then the next
   * in turn, as Kafka's sticky partitioner fills one batch before it moves on;
   * a call of clientOwnTurnCallItems or more takes the next node in turn for
   * itself (docs/decisions/046-sticky-placement.md). A home that left the
   * map, or failed a request, is replaced at once.
   */
  private stickyAddr(items: number): string {
    if (items >= clientOwnTurnCallItems) return this.nextAddr();
    if (this.home === null || this.homeItems >= this.stickyItems || !this.nodeAddrs().includes(this.home)) {
      this.home = this.nextAddr();
      this.homeItems = 0;
    }
    this.homeItems += items;
    return this.home;
  }

  private async client(addr: string): Promise<OrqClient> {
    const existing = this.clients.get(addr);
    if (existing !== undefined && existing.connected) return existing;
    const colon = addr.lastIndexOf(":");
    const client = await OrqClient.connect({ ...this.options, host: addr.slice(0, colon), port: Number(addr.slice(colon + 1)), reconnect: false });
    this.clients.set(addr, client);
    return client;
  }

  private forget(addr: string): void {
    const client = this.clients.get(addr);
    this.clients.delete(addr);
    void client?.close().catch(() => undefined);
  }
}

