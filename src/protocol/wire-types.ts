// The wire shapes of protocol v1, as the contract names them (snake_case).
// The server's op files produce these; the client sends requests and reads
// replies of these shapes. Byte fields are MessagePack bin (Uint8Array).

import type { ErrorCode } from "./error-codes.ts";
import type { LiveStateName } from "./live-states.ts";

export const protocolVersion = 1;

/** Request ids run from 1 to 2^53-1; id 0 is reserved for connection-level errors. */
export const requestIdMax = Number.MAX_SAFE_INTEGER;

export interface WireErrorDetails {
  field?: string;
  index?: number;
  retry_after_ms?: number;
  request_id?: string;
  /** MOVED: the shard the request needs, its owner and where to reach it, and the map version that says so. */
  shard?: number;
  node_id?: string;
  addr?: string;
  map_version?: number;
}

export interface WireError {
  code: ErrorCode;
  message: string;
  details?: WireErrorDetails;
}

export interface WireLimits {
  payload_bytes_max: number;
  metadata_bytes_max: number;
  result_bytes_max: number;
  items_per_enqueue_max: number;
  count_per_dequeue_max: number;
  topic_bytes_max: number;
  wait_ms_max: number;
  lease_ms_max: number;
  ids_per_request_max: number;
}

export interface WireHelloResult {
  server: "orq";
  version: string;
  protocol: number;
  node_id: string;
  shards: number;
  max_frame_bytes: number;
  limits: WireLimits;
  /** Cluster mode only. */
  cluster?: WireClusterMap;
  /** Namespaces kept only in memory (a restart empties them): ["*"] for the whole server (--store memory); absent when none. */
  memory_namespaces?: string[];
}

/** Cluster mode's shard map (hello and the `cluster` op). */
export interface WireClusterMap {
  map_version: number;
  node_id: string;
  nodes: Array<{ node_id: string; addr: string }>;
  /** Per shard, the owning node's id, or null when no live node owns it. */
  owners: Array<string | null>;
}

export interface WireDelivery {
  id: string;
  topic: string;
  priority: number;
  payload: Uint8Array;
  metadata: Uint8Array;
  attempt: number;
  receipt: string;
  lease_expires_at_ms: number;
  enqueued_at_ms: number;
  group?: string;
  trace?: string;
}

export interface WireItemState {
  id: string;
  topic: string;
  state: LiveStateName;
  priority: number;
  payload: Uint8Array;
  metadata: Uint8Array;
  attempt: number;
  deliver_at_ms: number;
  enqueued_at_ms: number;
  lease_expires_at_ms?: number;
  requires?: Record<string, unknown>;
  after?: string[];
  key?: string;
  group?: string;
  prefers?: Record<string, unknown>;
  prefer_wait_ms?: number;
  trace?: string;
  dead_reason?: string;
}

export interface WireEndedItemState {
  id: string;
  state: "ended";
  outcome: "acked" | "cancelled" | "expired";
  /** The `ack` result an acked item was given, while its outcome is retained. */
  result?: Uint8Array;
}

export interface WireTopicCounts {
  topic: string;
  ready: number;
  delayed: number;
  waiting: number;
  leased: number;
  dead: number;
  /** Whether the topic is paused (the `pause` op). */
  paused: boolean;
  /** When a timed pause ends; absent for a pause until `resume`, and when not paused. */
  paused_until_ms?: number;
}
