// The engine's public surface: what the server's op handlers call. The engine
// is synchronous (time arrives as `nowMs`); anything that must wait for disk
// comes back as `Reply.durable`. Inputs are already type-checked and
// range-checked by the server's request decoders (camelCase, bin fields
// copied out of the network buffer); the engine checks meaning (requires
// operators, after ids, quotas, shard health) and answers with a Failure.

import type { Commit } from "../storage/writer.ts";
import type { DeliveryMode, Outcome } from "../storage/record.ts";
import type { FailureKind } from "./failures/failure-kind.ts";
import type { FailureLocation, ItemPart } from "./failures/failure-location.ts";
import type { MapPath } from "./matching/types.ts";
import type { EngineStats } from "./reads/stats-shape.ts";


export type * from "./reads/stats-shape.ts";

export type { DeliveryMode, FailureKind, FailureLocation, ItemPart, MapPath, Outcome };

/** A failure the engine returns, in its own terms (failures/failure-kind.ts); the server maps it to the protocol's error in one place. */
export interface Failure {
  kind: FailureKind;
  message: string;
  /** Where in the request the fault lies (the server renders it as the wire's field path and batch index). */
  at?: FailureLocation;
  retryAfterMs?: number;
  /** shard_elsewhere (cluster mode): the shard the request needs and the node that owns it. */
  moved?: { shard: number; nodeId: string; addr: string; mapVersion: number };
}

export type Result<T> = { ok: true; value: T } | { ok: false; failure: Failure };

/**
 * A reply value and, when the reply may only be sent once something is
 * durable, the promise for that. `durable` rejects with
 * StorageUnavailableError (storage/writer.ts) when the commit failed. The
 * writing ops that end through ops/op-context.ts's finishOp also give the
 * `commit` it stands for: a caller that listens on it (the dispatcher, for
 * ack) never reads `durable`, and then no promise is made.
 */
export interface Reply<T> {
  value: T;
  durable: Promise<void> | null;
  readonly commit?: Commit;
}

export interface EnqueueItemInput {
  topic: string;
  priority: number;
  payload: Uint8Array;
  metadata: Uint8Array;
  /** At most one of deliverAtMs / delayMs is set. */
  deliverAtMs: number | null;
  delayMs: number | null;
  leaseMs: number | null;
  ttlMs: number | null;
  delivery: DeliveryMode;
  maxAttempts: number;
  /** Raw `requires` map; the engine validates it (invalid_value at this item's `requires` part, naming the feature). */
  requires: Record<string, unknown> | null;
  after: string[] | null;
  key: string | null;
  /** The fairness group (groups/group.ts), or null for the nil group. */
  group?: string | null;
  /** Raw `prefers` map; the engine validates it (as `requires`, plus `weight`). */
  prefers?: Record<string, unknown> | null;
  /** The contract's `prefer_wait_ms` (0: none). */
  preferWaitMs?: number;
  /** The producer's trace context, or null. */
  trace?: string | null;
}

/**
 * One dequeue request. The engine reads it during the call and keeps none of
 * it (a parked dequeue copies its topics), so a caller may reuse one input
 * object and its topics list across calls (the server's dequeue op does).
 */
export interface DequeueInput {
  topics: Array<{ topic: string; count: number }>;
  /** Raw capabilities map; the engine validates it (invalid_value at the place in the map). */
  capabilities: Record<string, unknown> | null;
  waitMs: number;
  leaseMs: number | null;
  /** Who parked the waiter (a connection id), so its waiters can be cancelled on close. */
  owner: number;
}

export interface Delivery {
  id: string;
  topic: string;
  priority: number;
  payload: Uint8Array;
  metadata: Uint8Array;
  attempt: number;
  receipt: string;
  leaseExpiresAtMs: number;
  enqueuedAtMs: number;
  /** The item's group; absent for the nil group. */
  group?: string;
  /** The item's trace context; absent without. */
  trace?: string;
}

/**
 * A dequeue that answered now: its deliveries and, when any is at_most_once
 * (or in cluster mode), the lease commit the reply waits for: `commit` to
 * listen on, as an ack's (the dispatcher: its reply is then queued as the
 * commit settles, with the acks of the same commit), or `durable`, its
 * promise (rejecting as Reply.durable does). A parked dequeue settles with
 * one of these too.
 */
export interface DequeueDone {
  ok: true;
  kind: "done";
  deliveries: Delivery[];
  readonly durable: Promise<void> | null;
  /** The lease commit; absent or null when the reply waits for none (an engine that gives only `durable` leaves it out). */
  readonly commit?: Commit | null;
}

/**
 * What a dequeue answers, flat: one object per dequeue rather than a Result
 * around an outcome around a Reply around the deliveries (each a heap cell
 * on the hottest path: docs/decisions/013-lent-replies-and-scratch.md).
 */
export type DequeueOutcome =
  | DequeueDone
  /** Nothing ready and waitMs > 0: the promise settles when items arrive, on timeout (empty), on shutdown, or on cancelWaiters. */
  | { ok: true; kind: "parked"; waiter: Promise<DequeueDone> }
  | { ok: false; failure: Failure };

/**
 * What an ack answers, flat as a dequeue's: one object per ack (the count,
 * the stale receipts, the commit), where a Result around a Reply around
 * `{acked, stale}` would be three heap cells
 * (docs/decisions/013-lent-replies-and-scratch.md). `durable` is the commit's
 * promise, made only when read; a caller that listens on `commit` (the
 * dispatcher) never reads it.
 */
export type AckOutcome = AckDone | { ok: false; failure: Failure };

export interface AckDone {
  readonly ok: true;
  readonly acked: number;
  /** Receipts that named no current delivery (or repeated one): one shared empty list when there are none. */
  readonly stale: readonly string[];
  readonly durable: Promise<void> | null;
  readonly commit?: Commit;
}

/** What a `wait` answers: the items' states now, or a promise of them. */
export type WaitOutcome =
  | { ok: true; kind: "done"; items: Array<ItemState | EndedItemState | null> }
  | { ok: true; kind: "parked"; waiter: Promise<Array<ItemState | EndedItemState | null>> }
  | { ok: false; failure: Failure };

/**
 * The states a live item is in. They are the contract's names
 * (protocol/live-states.ts), which the engine may not import: the server
 * hands them across in both directions, so the two lists must stay one type.
 */
export const liveStateNames = ["ready", "delayed", "waiting", "leased", "dead"] as const;

export type LiveStateName = (typeof liveStateNames)[number];

export interface ItemState {
  id: string;
  topic: string;
  state: LiveStateName;
  priority: number;
  payload: Uint8Array;
  metadata: Uint8Array;
  attempt: number;
  deliverAtMs: number;
  enqueuedAtMs: number;
  leaseExpiresAtMs?: number;
  requires?: Record<string, unknown>;
  after?: string[];
  key?: string;
  group?: string;
  prefers?: Record<string, unknown>;
  preferWaitMs?: number;
  trace?: string;
  deadReason?: string;
}

/** Where a `list` page stopped (reads/list-cursor.ts has its text form): a ready item's place in delivery order, or an item key in enqueue order. */
export type ListCursor =
  | { phase: "ready"; priority: number; deliverAtMs: number; key: number }
  | { phase: "enqueued"; key: number };

/** One `list` request (engine/reads/list.ts). */
export interface ListQuery {
  /** Only items in this state; null for every state. */
  state: LiveStateName | null;
  /** Items per page, 1..limits.listPageMax (the server checks it). */
  limit: number;
  /** Where the previous page stopped (its `next`), or null for the first page. */
  after: ListCursor | null;
}

export interface ListPage {
  items: ItemState[];
  /** Pass as `after` for the next page; null when the listing is complete. */
  next: ListCursor | null;
}

export interface EndedItemState {
  id: string;
  state: "ended";
  outcome: Outcome;
  /** The `ack` result an acked item was given, while its outcome is retained. */
  result?: Uint8Array;
}

export interface TopicCounts {
  topic: string;
  ready: number;
  delayed: number;
  waiting: number;
  leased: number;
  dead: number;
  /** Whether the topic is paused (ops/pause.ts). */
  paused: boolean;
  /** When a timed pause ends; absent for a pause until resume, and when not paused. */
  pausedUntilMs?: number;
}

/** A token bucket bound: `count` deliveries refilled continuously over `perMs`. */
export interface RateBound {
  count: number;
  perMs: number;
}

/** One `policy` request (groups/policy-ops.ts). */
export interface PolicyInput {
  topic: string;
  /** null: the topic's own policy; "*": every group without its own; else one group's. */
  group: string | null;
  weight: number | null;
  maxLeased: number | null;
  rate: RateBound | null;
  /** Remove the stored policy instead of setting one. */
  clear: boolean;
}

/** A stored policy as `policy` and `policies` answer it. */
export interface PolicyView {
  group?: string;
  weight?: number;
  maxLeased?: number;
  rate?: RateBound;
}

/** One group of a topic as `groups` answers it. */
export interface GroupCounts {
  /** null: the nil group (items without a group). */
  group: string | null;
  ready: number;
  delayed: number;
  waiting: number;
  leased: number;
  dead: number;
  paused: boolean;
  pausedUntilMs?: number;
}

/** One reason `explain` gives (the contract's table; only the fields of its reason are set). */
export interface ExplainReason {
  reason: string;
  untilMs?: number;
  after?: string[];
  deadReason?: string;
  leased?: number;
  max?: number;
  nextAtMs?: number;
  kinds?: Array<{ failed: string[] }>;
  ahead?: number;
}

export interface ExplainedItem {
  id: string;
  state: LiveStateName;
  reasons: ExplainReason[];
}

/** A `schedule` request, decoded by the server. */
export interface ScheduleInput {
  name: string;
  cron: string | null;
  everyMs: number | null;
  timezone: string;
  catchUp: "one" | "none";
  /** The item as enqueue takes it (the server reads it with enqueue's reader); no key, after or deliverAtMs. */
  item: EnqueueItemInput;
}

/** One schedule as `schedules` shows it. */
export interface ScheduleView {
  name: string;
  cron: string | null;
  everyMs: number | null;
  timezone: string;
  catchUp: "one" | "none";
  /** The item's template: EnqueueItem's request fields that are set (the server names them as the wire does). */
  item: Readonly<Record<string, unknown>>;
  nextAtMs: number | null;
  lastAtMs: number | null;
  lastId: string | null;
}

/** How ticks ended, counted since start (the metric orq_schedule_ticks_total{outcome}). */
export interface ScheduleTickCounts {
  /** A new item was enqueued. */
  enqueued: number;
  /** A live item already held the tick's key: nothing new (a tick fired twice). */
  duplicate: number;
  /** The namespace quota refused the item: logged, not retried. */
  refused: number;
  /** Any other refusal (a full server, an unhealthy shard): not retried either. */
  failed: number;
}

export interface EngineApi {
  /** over_limit (nothing stored) past liveItemsMax, topicsMax or namespacesMax (admission/capacity.ts). */
  enqueue(ns: string, items: EnqueueItemInput[], nowMs: number): Result<Reply<{ ids: string[] }>>;
  dequeue(ns: string, input: DequeueInput, nowMs: number): DequeueOutcome;
  /** A connection closed: its parked dequeues resolve empty without leasing anything. */
  cancelWaiters(owner: number): void;
  /** `results`, when given, is as long as `receipts`: each acked item keeps its result (or none for null) with its outcome. */
  ack(ns: string, receipts: string[], nowMs: number, results?: ReadonlyArray<Uint8Array | null> | null): AckOutcome;
  /** `priority`, when given, replaces the item's priority (the beanstalkd port's `release`; not on the wire). */
  nack(
    ns: string,
    items: Array<{ receipt: string; delayMs: number | null; metadata: Uint8Array | null; priority?: number | null }>,
    nowMs: number,
  ): Result<Reply<{ nacked: number; stale: string[] }>>;
  /** `metadata`, when given, replaces the item's metadata (a long job's progress). */
  extend(ns: string, items: Array<{ receipt: string; leaseMs: number; metadata?: Uint8Array | null }>, nowMs: number): Result<Reply<{ extended: number; stale: string[] }>>;
  cancel(ns: string, ids: string[], nowMs: number): Result<Reply<{ cancelled: number; missing: string[] }>>;
  get(ns: string, ids: string[], nowMs: number): Result<{ items: Array<ItemState | EndedItemState | null> }>;
  /**
   * `get`, answered once every id has ended (or names no live item of `ns`),
   * or when waitMs runs out, with each item's state then (ops/item-waits.ts).
   * over_limit past itemWaitsPerConnectionMax or itemWaitsTotalMax.
   */
  wait(ns: string, ids: string[], waitMs: number, owner: number, nowMs: number): WaitOutcome;
  topics(ns: string, query: { prefix: string | null; limit: number; after: string | null }): { topics: TopicCounts[]; next: string | null };
  dead(ns: string, topic: string, limit: number): { items: ItemState[] };
  redrive(ns: string, topic: string, ids: string[] | null, nowMs: number): Result<Reply<{ redriven: number }>>;
  /** One page of a topic's items, read only (engine/reads/list.ts): ready ones in delivery order, the others in enqueue order. */
  list(ns: string, topic: string, query: ListQuery, nowMs: number): ListPage;
  /**
   * Stop deliveries from a topic, or (group given) from one of its groups
   * (groups/group-pauses.ts), for `forMs` (null: until resume); replaces an
   * earlier pause's end. over_limit past pausedTopicsMax, or topicsMax /
   * namespacesMax for a new topic.
   */
  pause(ns: string, topic: string, forMs: number | null, nowMs: number, group?: string | null): Result<Reply<{ pausedUntilMs: number | null }>>;
  /** Lift a topic's (or a group's) pause; `resumed` false when it was not paused. */
  resume(ns: string, topic: string, nowMs: number, group?: string | null): Result<Reply<{ resumed: boolean }>>;
  /** Set or clear one policy of a topic; durable when the reply's promise settles. */
  policy(ns: string, input: PolicyInput, nowMs: number): Result<Reply<{ policy: PolicyView } | { cleared: boolean }>>;
  /** A topic's policies: its own first, then by group name; `after` is the last page's `next`. */
  policies(ns: string, topic: string, query: { limit: number; after: string | null }): { policies: PolicyView[]; next: string | null };
  /** A topic's groups with their counts and pauses, by group name (the nil group first). */
  groups(ns: string, topic: string, query: { limit: number; after: string | null }): { groups: GroupCounts[]; next: string | null };
  /** Why each item is not being delivered now (reads/explain.ts). */
  explain(ns: string, ids: string[], nowMs: number): Result<{ items: Array<ExplainedItem | null> }>;
  /**
   * Set a recurring item (engine/schedules/schedules.ts), replacing one of the same name; durable when the reply's
   * promise settles. `stored`: cluster mode, the shard a schedule of that name is stored on (storedScheduleShard).
   */
  schedule(ns: string, input: ScheduleInput, nowMs: number, stored?: number | null): Result<Reply<{ name: string; nextAtMs: number | null }>>;
  /** Remove a schedule; `removed` false when there was none. `stored` as for schedule. */
  unschedule(ns: string, name: string, nowMs: number, stored?: number | null): Result<Reply<{ removed: boolean }>>;
  /** Cluster mode: the shard a stored schedule of that name lives on, or null when there is none (absent on a single node). */
  storedScheduleShard?(ns: string, name: string): Promise<number | null>;
  /** A namespace's schedules by name (in cluster mode: those of this node's shards); `after` is the last page's `next`. */
  scheduleList(ns: string, query: { limit: number; after: string | null }): { schedules: ScheduleView[]; next: string | null };
  /** Cluster mode: the page of every node's schedules, read from the shared store (absent on a single node, where scheduleList is all). */
  scheduleListAll?(ns: string, query: { limit: number; after: string | null }, nowMs: number): Promise<{ schedules: ScheduleView[]; next: string | null }>;
  /** Counters and gauges, for `namespaces` only (null = all); reads/stats-shape.ts types them, docs/SEMANTICS.md documents them. */
  stats(namespaces: string[] | null, nowMs: number): EngineStats;
  /** Handle due deadlines (delays, leases, TTLs, waiter timeouts, outcome retention); bounded work per call. */
  tick(nowMs: number): void;
  /** The earliest pending deadline, for the server's one timer; null when none. */
  nextDeadlineMs(): number | null;
  /** Write what the engine deferred (at_least_once leases) now: called at graceful shutdown. */
  flushDeferredWrites(): void;
  /** Shutdown: every parked dequeue resolves now with what it has; new dequeues are the server's to refuse. */
  releaseWaiters(): void;
}

/** An item state with the settings a by-id inspection also shows (the beanstalkd port's `stats-job`). */
export interface ItemDetail extends ItemState {
  /** The item's own lease (its `lease_ms`, the default a dequeue grants). */
  leaseMs: number;
  /** Deliveries ever made, across redrives (attempt is reset by redrive, this is not). */
  deliveries: number;
  maxAttempts: number;
}

/** The states an ordered look at a topic can ask for: ready in delivery order, delayed by due time, dead in the order they died. */
export type ListableState = "ready" | "delayed" | "dead";

/**
 * Ops on single items by id, and ordered looks into one topic, beside the
 * contract's ops (engine/ops/item-ops.ts documents each). The beanstalkd port
 * needs them; they are general and any front end may use them.
 */
export interface ItemOpsApi {
  /** One live item with its settings, or null when missing or in another namespace. */
  inspect(ns: string, id: string, nowMs: number): ItemDetail | null;
  /** Lease the named item now whatever its live state but leased or waiting (ready, delayed, dead); null when it is none of these. */
  take(ns: string, id: string, leaseMs: number | null, nowMs: number): Result<Reply<{ delivery: Delivery | null }>>;
  /** Leased items become dead letters now (reason `reason`), optionally with a new priority. */
  deadLetter(
    ns: string,
    items: Array<{ receipt: string; priority: number | null; reason: string }>,
    nowMs: number,
  ): Result<Reply<{ dead: number; stale: string[] }>>;
  /** Delayed items become deliverable now; ids that name no delayed item of `ns` are listed in `missing`. */
  deliverNow(ns: string, ids: string[], nowMs: number): Result<Reply<{ moved: number; missing: string[] }>>;
  /** Ids of up to `limit` items of one topic in one state, in that state's order (see ListableState). */
  firstIds(ns: string, topic: string, state: ListableState, limit: number): string[];
  /** Of `topics` (paused ones skipped), the one whose best takeable item comes first in delivery order (a dequeue without capabilities would take it), or null when none has one. */
  bestReadyTopic(ns: string, topics: string[]): string | null;
  /** Ready items with priority below `priorityBelow`, in one topic or (null) every topic of `ns`: a scan of the live items. */
  countReadyBelow(ns: string, topic: string | null, priorityBelow: number): number;
}
