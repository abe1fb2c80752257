// OrqClient: one typed camelCase method per protocol op, over a Transport.
// Requests are converted to the wire's snake_case here and replies back;
// payload and metadata in replies are copied, so they do not pin the socket's
// read buffers.

import type { OpName } from "../protocol/op-names.ts";
import type { WireDelivery, WireEndedItemState, WireItemState, WireTopicCounts } from "../protocol/wire-types.ts";
import {
  explanationFromWire,
  groupCountsFromWire,
  policyFromWire,
  policyRequestFields,
  policyResultFromWire,
  type WireGroupCounts,
  type WireItemExplanation,
  type WirePolicy,
} from "./fair-sharing-wire.ts";
import { anyStateFromWire, bytes, deliveryFromWire, enqueueItemToWire, itemStateFromWire } from "./item-wire.ts";
import { OrqError } from "./orq-error.ts";
import { activeTrace, loadOtel } from "./otel-trace.ts";
import { scheduleFromWire, scheduleRequestFields } from "./schedule-wire.ts";
import { Transport, type WireMap } from "./transport.ts";
import { startWorker, type WorkerHandle, type WorkHandler, type WorkOptions } from "./worker.ts";
import type {
  ClientOptions,
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
  ServerHello,
  TopicCounts,
} from "./types.ts";

/** A request-options bag every method accepts. */
export interface CallOptions {
  /** Overrides the client's requestTimeoutMs for this call. */
  timeoutMs?: number;
}

/** ack's options: `results`, as long as the receipts, gives each item a result (bytes, or a string sent as UTF-8; null for none). */
export interface AckOptions extends CallOptions {
  results?: Array<Uint8Array | string | null | undefined>;
}

export class OrqClient {
  /** What the server said in the last hello. */
  server: ServerHello | null = null;

  private constructor(private readonly transport: Transport) {}

  /** Connect and say hello (with the token, if any); rejects with OrqError (e.g. UNAUTHORIZED, unless helloRequired is false). */
  static async connect(options: ClientOptions = {}): Promise<OrqClient> {
    const transport = new Transport(options);
    const client = new OrqClient(transport);
    try {
      client.server = helloFromWire(await transport.open());
    } catch (error) {
      const unauthorizedOk = options.helloRequired === false && error instanceof OrqError && error.code === "UNAUTHORIZED";
      if (!unauthorizedOk) {
        await transport.close();
        throw error;
      }
    }
    return client;
  }

  get connected(): boolean {
    return this.transport.isOpen;
  }

  /** Any op by name, with wire (snake_case) fields; resolves with the reply map. */
  request(op: string, fields: WireMap = {}, options: CallOptions = {}): Promise<WireMap> {
    return this.transport.request(op, fields, options.timeoutMs);
  }

  /** One of the contract's ops, as the typed methods send it: a misspelt op name is a type error. */
  private call(op: OpName, fields: WireMap, options: CallOptions): Promise<WireMap> {
    return this.transport.request(op, fields, options.timeoutMs);
  }

  async hello(options: CallOptions = {}): Promise<ServerHello> {
    const fields: WireMap = { protocol: 1 };
    const { token, clientName } = this.transport.options;
    if (token !== undefined) fields.token = token;
    if (clientName !== undefined) fields.client = clientName;
    this.server = helloFromWire(await this.call("hello", fields, options));
    return this.server;
  }

  async ping(options: CallOptions = {}): Promise<{ nowMs: number }> {
    const reply = await this.call("ping", {}, options);
    return { nowMs: reply.now_ms as number };
  }

  /**
   * Enqueue a batch (all or nothing); resolves with the ids in request order
   * once stored. An item without `trace` gets the active OpenTelemetry trace
   * context, when @opentelemetry/api is installed and tracing is on.
   */
  async enqueue(ns: string, items: EnqueueItem[], options: CallOptions = {}): Promise<string[]> {
    const trace = await this.producerTrace(items);
    const wireItems = items.map((item) => enqueueItemToWire(item, trace));
    const reply = await this.call("enqueue", { ns, items: wireItems }, options);
    return reply.ids as string[];
  }

  /**
   * Enqueue a batch, then wait up to `waitMs` for every item to end
   * (waitFor): the request-reply pattern. Items still live when the wait runs
   * out come back in their current state.
   */
  async enqueueAndWait(ns: string, items: EnqueueItem[], waitMs: number, options: CallOptions = {}): Promise<EnqueueAndWaitResult> {
    const ids = await this.enqueue(ns, items, options);
    return { ids, items: await this.waitFor(ns, ids, waitMs, options) };
  }

  /**
   * The `wait` op: resolves as soon as every id has ended (acked items with
   * their `result`), or when `waitMs` runs out, with each item's state at that
   * moment, in request order (null for an id the server does not know). The
   * timeout covers waitMs plus the usual request timeout.
   */
  async waitFor(ns: string, ids: string[], waitMs: number, options: CallOptions = {}): Promise<Array<ItemState | EndedItemState | null>> {
    const timeoutMs = (options.timeoutMs ?? this.transport.options.requestTimeoutMs) + waitMs;
    const reply = await this.call("wait", { ns, ids, wait_ms: waitMs }, { timeoutMs });
    return (reply.items as Array<WireItemState | WireEndedItemState | null>).map(anyStateFromWire);
  }

  /** Lease ready items; with waitMs, waits for items up to that long. The timeout covers waitMs plus the usual request timeout. */
  async dequeue(ns: string, request: DequeueRequest, options: CallOptions = {}): Promise<Delivery[]> {
    const waitMs = request.waitMs ?? 0;
    const timeoutMs = (options.timeoutMs ?? this.transport.options.requestTimeoutMs) + waitMs;
    const reply = await this.call(
      "dequeue",
      {
        ns,
        topics: request.topics.map((t) => ({ topic: t.topic, count: t.count ?? 1 })),
        capabilities: request.capabilities,
        wait_ms: request.waitMs,
        lease_ms: request.leaseMs,
      },
      { timeoutMs },
    );
    return (reply.items as WireDelivery[]).map(deliveryFromWire);
  }

  /** End deliveries (outcome acked); `options.results` gives each item a result that get and waitFor return. */
  async ack(ns: string, receipts: string[], options: AckOptions = {}): Promise<{ acked: number; stale: string[] }> {
    const results = options.results?.map((result) => bytes(result ?? undefined) ?? null);
    const reply = await this.call("ack", { ns, receipts, results }, options);
    return { acked: reply.acked as number, stale: reply.stale as string[] };
  }

  async nack(
    ns: string,
    items: Array<{ receipt: string; delayMs?: number; metadata?: Uint8Array | string }>,
    options: CallOptions = {},
  ): Promise<{ nacked: number; stale: string[] }> {
    const wireItems = items.map((i) => ({ receipt: i.receipt, delay_ms: i.delayMs, metadata: bytes(i.metadata) }));
    const reply = await this.call("nack", { ns, items: wireItems }, options);
    return { nacked: reply.nacked as number, stale: reply.stale as string[] };
  }

  /** Set leases to end `leaseMs` from now; `metadata`, when given, replaces the item's (progress a long job reports). */
  async extend(
    ns: string,
    items: Array<{ receipt: string; leaseMs: number; metadata?: Uint8Array | string }>,
    options: CallOptions = {},
  ): Promise<{ extended: number; stale: string[] }> {
    const wireItems = items.map((i) => ({ receipt: i.receipt, lease_ms: i.leaseMs, metadata: bytes(i.metadata) }));
    const reply = await this.call("extend", { ns, items: wireItems }, options);
    return { extended: reply.extended as number, stale: reply.stale as string[] };
  }

  async cancel(ns: string, ids: string[], options: CallOptions = {}): Promise<{ cancelled: number; missing: string[] }> {
    const reply = await this.call("cancel", { ns, ids }, options);
    return { cancelled: reply.cancelled as number, missing: reply.missing as string[] };
  }

  async get(ns: string, ids: string[], options: CallOptions = {}): Promise<Array<ItemState | EndedItemState | null>> {
    const reply = await this.call("get", { ns, ids }, options);
    return (reply.items as Array<WireItemState | WireEndedItemState | null>).map(anyStateFromWire);
  }

  async topics(
    ns: string,
    query: { prefix?: string; limit?: number; after?: string } = {},
    options: CallOptions = {},
  ): Promise<{ topics: TopicCounts[]; next: string | null }> {
    const reply = await this.call("topics", { ns, prefix: query.prefix, limit: query.limit, after: query.after }, options);
    return {
      topics: (reply.topics as WireTopicCounts[]).map((t) => {
        const counts: TopicCounts = { topic: t.topic, ready: t.ready, delayed: t.delayed, waiting: t.waiting, leased: t.leased, dead: t.dead, paused: t.paused === true };
        if (typeof t.paused_until_ms === "number") counts.pausedUntilMs = t.paused_until_ms;
        return counts;
      }),
      next: typeof reply.next === "string" ? reply.next : null,
    };
  }

  /**
   * One page of a topic's items, read only: ready ones in delivery order, the
   * others in enqueue order (only `state` when given). A page may hold fewer
   * than `limit` items while `next` is still set: keep going until it is null.
   */
  async list(
    ns: string,
    topic: string,
    query: { state?: ItemState["state"]; limit?: number; after?: string } = {},
    options: CallOptions = {},
  ): Promise<ItemPage> {
    const reply = await this.call("list", { ns, topic, state: query.state, limit: query.limit, after: query.after }, options);
    return { items: (reply.items as WireItemState[]).map(itemStateFromWire), next: typeof reply.next === "string" ? reply.next : null };
  }

  /**
   * Stop deliveries from a topic (or, with `group`, from that group's items
   * only) for `forMs`, or until resume; replaces an earlier pause's end.
   */
  async pause(
    ns: string,
    topic: string,
    query: { forMs?: number; group?: string } = {},
    options: CallOptions = {},
  ): Promise<{ pausedUntilMs: number | null }> {
    const reply = await this.call("pause", { ns, topic, group: query.group, for_ms: query.forMs }, options);
    return { pausedUntilMs: typeof reply.paused_until_ms === "number" ? reply.paused_until_ms : null };
  }

  /** Lift a topic's pause (or one group's); `resumed` is false when it was not paused. */
  async resume(ns: string, topic: string, query: { group?: string } = {}, options: CallOptions = {}): Promise<{ resumed: boolean }> {
    const reply = await this.call("resume", { ns, topic, group: query.group }, options);
    return { resumed: reply.resumed === true };
  }

  /**
   * Set the policy of a topic (no `group`), of one group, or of every group
   * without one of its own (`group: "*"`). It replaces the whole stored
   * policy: a bound not given is no bound. `clear` removes it instead.
   */
  async policy(ns: string, topic: string, input: PolicyInput, options: CallOptions = {}): Promise<PolicyResult> {
    return policyResultFromWire(await this.call("policy", { ns, ...policyRequestFields(topic, input) }, options));
  }

  /** One page of a topic's policies: its own first, then by group name. */
  async policies(ns: string, topic: string, query: { limit?: number; after?: string } = {}, options: CallOptions = {}): Promise<PolicyPage> {
    const reply = await this.call("policies", { ns, topic, limit: query.limit, after: query.after }, options);
    return { policies: (reply.policies as WirePolicy[]).map(policyFromWire), next: typeof reply.next === "string" ? reply.next : null };
  }

  /** One page of a topic's groups with their counts by state, by group name (the items without a group, `group: null`, first). */
  async groups(ns: string, topic: string, query: { limit?: number; after?: string } = {}, options: CallOptions = {}): Promise<GroupPage> {
    const reply = await this.call("groups", { ns, topic, limit: query.limit, after: query.after }, options);
    return { groups: (reply.groups as WireGroupCounts[]).map(groupCountsFromWire), next: typeof reply.next === "string" ? reply.next : null };
  }

  /** Why each item is not being delivered right now, in request order (null for an id the server does not know). */
  async explain(ns: string, ids: string[], options: CallOptions = {}): Promise<Array<ItemExplanation | null>> {
    const reply = await this.call("explain", { ns, ids }, options);
    return (reply.items as Array<WireItemExplanation | null>).map(explanationFromWire);
  }

  async dead(ns: string, topic: string, query: { limit?: number } = {}, options: CallOptions = {}): Promise<ItemState[]> {
    const reply = await this.call("dead", { ns, topic, limit: query.limit }, options);
    return (reply.items as WireItemState[]).map(itemStateFromWire);
  }

  async redrive(ns: string, topic: string, ids?: string[], options: CallOptions = {}): Promise<{ redriven: number }> {
    const reply = await this.call("redrive", { ns, topic, ids }, options);
    return { redriven: reply.redriven as number };
  }

  /** Create or replace a recurring item (the contract's "Schedules"); resolves with its next tick. */
  async schedule(ns: string, input: ScheduleInput, options: CallOptions = {}): Promise<{ name: string; nextAtMs: number }> {
    const reply = await this.call("schedule", { ns, ...scheduleRequestFields(input) }, options);
    return { name: reply.name as string, nextAtMs: reply.next_at_ms as number };
  }

  /** Remove a schedule; `removed` is false when there was none of that name. */
  async unschedule(ns: string, name: string, options: CallOptions = {}): Promise<{ removed: boolean }> {
    const reply = await this.call("unschedule", { ns, name }, options);
    return { removed: reply.removed === true };
  }

  /** One page of the namespace's schedules, by name. */
  async schedules(ns: string, query: { limit?: number; after?: string } = {}, options: CallOptions = {}): Promise<SchedulePage> {
    const reply = await this.call("schedules", { ns, limit: query.limit, after: query.after }, options);
    return { schedules: (reply.schedules as WireMap[]).map(scheduleFromWire), next: typeof reply.next === "string" ? reply.next : null };
  }

  /** Counters and gauges (see docs/PROTOCOL.md), as the server sends them. */
  async stats(ns?: string, options: CallOptions = {}): Promise<Record<string, unknown>> {
    const reply = await this.call("stats", { ns }, options);
    const { id: _id, ok: _ok, ...rest } = reply;
    return rest;
  }

  /**
   * Run a worker loop on this connection: long-poll dequeues of one topic,
   * up to `concurrency` handlers at once, leases extended while they run, ack
   * on success, nack with exponential back-off on a throw (see worker.ts).
   */
  work(options: WorkOptions, handler: WorkHandler): WorkerHandle {
    return startWorker(this, options, handler);
  }

  /** The trace context enqueue writes into items without one: the active span's, when tracing is on and some item needs it. */
  private async producerTrace(items: EnqueueItem[]): Promise<string | undefined> {
    if (!this.transport.options.trace || items.every((item) => item.trace !== undefined)) return undefined;
    const api = await loadOtel();
    return api === null ? undefined : activeTrace(api);
  }

  /** Close the connection; pending requests reject with CLOSED. */
  close(): Promise<void> {
    return this.transport.close();
  }
}

function helloFromWire(reply: WireMap): ServerHello {
  const limits = reply.limits as Record<string, number>;
  const hello: ServerHello = {
    server: reply.server as string,
    version: reply.version as string,
    protocol: reply.protocol as number,
    nodeId: reply.node_id as string,
    shards: reply.shards as number,
    maxFrameBytes: reply.max_frame_bytes as number,
    limits: {
      payloadBytesMax: limits.payload_bytes_max!,
      metadataBytesMax: limits.metadata_bytes_max!,
      itemsPerEnqueueMax: limits.items_per_enqueue_max!,
      countPerDequeueMax: limits.count_per_dequeue_max!,
      topicBytesMax: limits.topic_bytes_max!,
      waitMsMax: limits.wait_ms_max!,
      leaseMsMax: limits.lease_ms_max!,
      idsPerRequestMax: limits.ids_per_request_max!,
    },
  };
  if (Array.isArray(reply.memory_namespaces)) hello.memoryNamespaces = reply.memory_namespaces as string[];
  return hello;
}
