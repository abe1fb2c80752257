// What went wrong, in the engine's own terms: the closed list of kinds of
// failure an engine (or the cluster's routing engine in front of it) answers.
// Each says what the engine found, not what a protocol calls it: the server
// maps every kind to the wire's error code in one place
// (server/error-mapping.ts), the beanstalkd front end to its answers in its
// own (beanstalk/command-context.ts). Both mappings are total records over
// this list, so a new kind without a wire code does not type-check.

export const failureKinds = [
  /** A value the engine cannot accept (a malformed `requires` or `capabilities` map). */
  "invalid_value",
  /** The request goes past a named maximum (limits.ts): too many items, ids, waiters, paused topics; a batch larger than the quota ever admits. */
  "over_limit",
  /** An `after` id that names no item this namespace knows. */
  "unknown_dependency",
  /** The namespace's enqueue quota is spent for now; retryAfterMs says when it has enough. */
  "rate_limited",
  /** The store does not take writes for the shard now (its breaker is open, its write queue is full; in cluster mode, a shard this node does not serve); retryAfterMs hints when to retry. */
  "storage_unavailable",
  /** A server-wide table is full (live requires signatures, parked dequeues): not this request's fault; retry later. */
  "server_full",
  /** The namespace's quota cannot be checked (cluster: its tokens cannot be drawn from the database). */
  "quota_unreachable",
  /** The shard the request needs is owned by another node; `moved` says which and where. */
  "shard_elsewhere",
  /** No node serves the shard right now (no live owner yet, the owner still loading it, or this node taking on or giving up shards). */
  "shard_unserved",
] as const;

export type FailureKind = (typeof failureKinds)[number];
