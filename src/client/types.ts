// The client's camelCase view of protocol v1: what its methods take and return.
// Byte fields are Uint8Array; a string payload or metadata is sent as UTF-8.

import type { LiveStateName } from "../protocol/live-states.ts";
import type { ClientClock } from "./client-clock.ts";

export type DeliveryMode = "at_least_once" | "at_most_once";

export interface EnqueueItem {
  topic: string;
  priority?: number;
  payload?: Uint8Array | string;
  metadata?: Uint8Array | string;
  delayMs?: number;
  deliverAtMs?: number;
  leaseMs?: number;
  ttlMs?: number;
  delivery?: DeliveryMode;
  maxAttempts?: number;
  requires?: Record<string, unknown>;
  after?: string[];
  /** Idempotency key, unique within ns + topic + group. */
  key?: string;
  /** Fairness group (1..255 bytes): deliveries rotate between a topic's groups by weight, and policies bound them. */
  group?: string;
  /** Soft matching: constraints like `requires` (each may carry `weight`, 1..1000); workers that fit more come first. */
  prefers?: Record<string, unknown>;
  /** How long only fully fitting workers may take the item once ready (default 0). */
  preferWaitMs?: number;
  /**
   * The producer's trace context (at most 512 bytes): W3C `traceparent`, then
   * a space and `tracestate`. Left out, enqueue writes the active
   * OpenTelemetry context when @opentelemetry/api is installed.
   */
  trace?: string;
}

export interface DequeueRequest {
  topics: Array<{ topic: string; count?: number }>;
  capabilities?: Record<string, unknown>;
  waitMs?: number;
  leaseMs?: number;
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
  /** The item's fairness group; absent for an item without one. */
  group?: string;
  /** The producer's trace context, as enqueued (EnqueueItem.trace). */
  trace?: string;
}

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

export interface EndedItemState {
  id: string;
  state: "ended";
  outcome: "acked" | "cancelled" | "expired";
  /** What the ack gave as the item's result (kept for the server's outcome_retention_ms); absent when none. */
  result?: Uint8Array;
}

/** What enqueueAndWait resolves with: the ids in request order, and each item's state when the wait ended. */
export interface EnqueueAndWaitResult {
  ids: string[];
  items: Array<ItemState | EndedItemState | null>;
}

export interface TopicCounts {
  topic: string;
  ready: number;
  delayed: number;
  waiting: number;
  leased: number;
  dead: number;
  /** Whether the topic is paused (OrqClient.pause). */
  paused: boolean;
  /** When a timed pause ends; absent for a pause until resume, and when not paused. */
  pausedUntilMs?: number;
}

/** A page of OrqClient.list: `next` continues the listing (pass it as `after`), null when done. */
export interface ItemPage {
  items: ItemState[];
  next: string | null;
}

/** A token bucket: `count` tokens refilled continuously over `perMs` (at most `count` in a burst). */
export interface PolicyRate {
  count: number;
  perMs: number;
}

/**
 * A stored policy. Without `group` it is the topic's own; `group: "*"` is the
 * default of every group that has none of its own. An absent bound is no bound.
 */
export interface Policy {
  group?: string;
  /** Share of deliveries against the topic's other groups (1..10000, groups only; default 1). */
  weight?: number;
  /** At most this many of the scope's items leased at once. */
  maxLeased?: number;
  rate?: PolicyRate;
}

/**
 * What OrqClient.policy sets: the whole policy of the topic (no `group`), of
 * one group, or of every group (`"*"`), replacing what was stored; `clear`
 * removes it instead.
 */
export interface PolicyInput {
  group?: string;
  weight?: number;
  maxLeased?: number;
  rate?: PolicyRate;
  clear?: boolean;
}

/** The policy as stored, or (for `clear`) whether there was one to remove. */
export type PolicyResult = { policy: Policy } | { cleared: boolean };

/** A page of OrqClient.policies: the topic's own first, then by group name; `next` continues it (pass it as `after`). */
export interface PolicyPage {
  policies: Policy[];
  next: string | null;
}

/** One group's items of a topic by state; `group` is null for the items without one. */
export interface GroupCounts {
  group: string | null;
  ready: number;
  delayed: number;
  waiting: number;
  leased: number;
  dead: number;
  /** Whether the group is paused (OrqClient.pause with `group`). */
  paused: boolean;
  /** When a timed pause ends; absent for a pause until resume, and when not paused. */
  pausedUntilMs?: number;
}

/** A page of OrqClient.groups, by group name (the null group first); `next` continues it (pass it as `after`). */
export interface GroupPage {
  groups: GroupCounts[];
  next: string | null;
}

/** The contract's reasons an item is not being delivered now. */
export type ExplainReasonName =
  | "delayed"
  | "waiting"
  | "leased"
  | "dead"
  | "topic_paused"
  | "group_paused"
  | "topic_max_leased"
  | "group_max_leased"
  | "topic_rate"
  | "group_rate"
  | "held_for_preferred"
  | "no_worker"
  | "no_dequeue"
  | "behind";

/** One reason with its details; which details come depends on the reason (docs/CLIENTS.md). */
export interface ExplainReason {
  /** A reason this client does not know yet arrives as the server spells it. */
  reason: ExplainReasonName | (string & {});
  untilMs?: number;
  /** `waiting`: the dependencies not acked yet. */
  after?: string[];
  deadReason?: string;
  /** `*_max_leased`: leased now, and the bound. */
  leased?: number;
  max?: number;
  /** `*_rate`: when the next token comes. */
  nextAtMs?: number;
  /** `no_worker`: per worker kind that asked, the constraints it fails. */
  kinds?: Array<{ failed: string[] }>;
  /** `behind`: items that go first (counted up to 1,000). */
  ahead?: number;
}

/** Why an item is not being delivered right now; `reasons` is empty when it is first in line for a worker that asked. */
export interface ItemExplanation {
  id: string;
  state: LiveStateName;
  reasons: ExplainReason[];
}

export interface ServerHello {
  server: string;
  version: string;
  protocol: number;
  nodeId: string;
  shards: number;
  maxFrameBytes: number;
  limits: {
    payloadBytesMax: number;
    metadataBytesMax: number;
    itemsPerEnqueueMax: number;
    countPerDequeueMax: number;
    topicBytesMax: number;
    waitMsMax: number;
    leaseMsMax: number;
    idsPerRequestMax: number;
  };
  /** Namespaces the server keeps only in memory (a restart empties them): ["*"] for the whole server; absent when none. */
  memoryNamespaces?: string[];
}

export interface ClientOptions {
  host?: string;
  port?: number;
  /** Sent in every hello (at connect and after each reconnect). */
  token?: string;
  /** Sent as hello.client, for the server's logs. */
  clientName?: string;
  /**
   * When false, a hello answered UNAUTHORIZED still leaves connect() connected
   * (with `server` null): enough for `ping`, which needs no token. Default true:
   * connect() rejects.
   */
  helloRequired?: boolean;
  /** Per-request timeout (default 30 s); a dequeue gets its wait_ms on top. */
  requestTimeoutMs?: number;
  /** How long connect() waits for the TCP connection and hello (default 5 s). */
  connectTimeoutMs?: number;
  /**
   * Whether enqueue writes the active OpenTelemetry trace context into items
   * that carry no `trace` (default true; without @opentelemetry/api installed
   * there is none to write).
   */
  trace?: boolean;
  /** Reconnect after a lost connection (default true). */
  reconnect?: boolean;
  /** First reconnect delay (default 100 ms), doubled per failed attempt up to reconnectDelayMsMax (default 5 s). */
  reconnectDelayMs?: number;
  reconnectDelayMsMax?: number;
  /** Largest reply frame accepted (default 256 MiB: a dequeue of many large items is big). */
  frameBytesMax?: number;
  /** Connection events, for logging: "disconnected", "reconnected", "reconnect_failed". */
  onEvent?: (event: ClientEvent) => void;
  /**
   * The time request timeouts, the connect timeout and reconnect delays read
   * (default: performance.now() and the runtime's timers). For tests and
   * simulations that step time themselves (client-clock.ts).
   */
  clock?: ClientClock;
}

/** OrqClusterClient's options: a node's, and how it places items that name no shard. */
export interface ClusterClientOptions extends ClientOptions {
  /**
   * Items with no key, group or `after` sent to one node before the client
   * moves on to the next (default 1,000; 1 sends each call to the next node).
   * A call's items are never split for it, and a call of 100 or more goes to
   * the next node in turn by itself (docs/decisions/046-sticky-placement.md).
   */
  stickyItems?: number;
}

export type ClientEvent =
  | { kind: "disconnected"; error: Error | null }
  | { kind: "reconnected"; attempt: number }
  | { kind: "reconnect_failed"; attempt: number; error: Error; delayMs: number }
  | { kind: "hello_failed"; error: Error };

/** What a schedule enqueues at each tick: an item as enqueue takes it, without `key` and `after`. */
export type ScheduleItem = Omit<EnqueueItem, "key" | "after">;

/**
 * What OrqClient.schedule sets: a recurring item, on a `cron` (5 or 6
 * fields, in `timezone`, default UTC) or `everyMs` (>= 1000). `catchUp`
 * says what the server does with ticks missed while it was down: "one"
 * (default) enqueues one item for the latest, "none" skips them. A schedule
 * with an existing name replaces it.
 */
export interface ScheduleInput {
  name: string;
  cron?: string;
  everyMs?: number;
  timezone?: string;
  item: ScheduleItem;
  catchUp?: "one" | "none";
}

/** A stored schedule (OrqClient.schedules). */
export interface Schedule {
  name: string;
  cron?: string;
  everyMs?: number;
  timezone: string;
  item: ScheduleItem;
  catchUp: "one" | "none";
  nextAtMs: number;
  /** The last tick that enqueued, and the id it enqueued; absent before the first. */
  lastAtMs?: number;
  lastId?: string;
}

/** A page of OrqClient.schedules, by name; `next` continues it (pass it as `after`), null when done. */
export interface SchedulePage {
  schedules: Schedule[];
  next: string | null;
}
