// The one mapping from failures to wire errors: engine Failures (each
// failure kind to its protocol code, wireCodeOfKind below), the server's own
// request-decoding failures, rejections of Reply.durable
// (StorageUnavailableError becomes UNAVAILABLE with a retry hint), and
// anything else thrown, which is a bug: INTERNAL, logged with a request id the
// client also receives. A failed assertion never comes here: it stops the
// process (fatal.ts). The codes the server raises itself before or beside the
// engine (BAD_FRAME, UNKNOWN_OP, UNAUTHORIZED, ...) are docs/ARCHITECTURE.md's
// "Who owns which error code".

import type { Failure, FailureKind } from "../engine/api.ts";
import type { ErrorCode } from "../protocol/error-codes.ts";
import type { WireError, WireErrorDetails } from "../protocol/wire-types.ts";
import { StorageUnavailableError } from "../storage/writer.ts";
import type { Logger } from "./logger.ts";
import type { RequestFailure } from "./request-reader.ts";
import { wireField, wireIndex } from "./wire-field.ts";

/**
 * The protocol's code for each kind of engine failure. A record over every
 * kind, so a kind added to engine/failures/failure-kind.ts without a code here does
 * not type-check.
 */
export const wireCodeOfKind: Readonly<Record<FailureKind, ErrorCode>> = Object.freeze({
  invalid_value: "BAD_REQUEST",
  over_limit: "TOO_LARGE",
  unknown_dependency: "NOT_FOUND",
  rate_limited: "RATE_LIMITED",
  storage_unavailable: "UNAVAILABLE",
  server_full: "UNAVAILABLE",
  quota_unreachable: "UNAVAILABLE",
  shard_elsewhere: "MOVED",
  shard_unserved: "UNAVAILABLE",
});

/** An engine failure (its kind mapped by wireCodeOfKind, its location rendered by wire-field.ts) or one of the server's own decoding failures (a wire path already). */
export function failureToWire(failure: Failure | RequestFailure): WireError {
  const details: WireErrorDetails = {};
  if ("field" in failure) {
    details.field = failure.field;
    if (failure.index !== undefined) details.index = failure.index;
    return { code: failure.code, message: failure.message, details };
  }
  if (failure.at !== undefined) {
    details.field = wireField(failure.at);
    const index = wireIndex(failure.at);
    if (index !== undefined) details.index = index;
  }
  if (failure.retryAfterMs !== undefined) details.retry_after_ms = failure.retryAfterMs;
  if (failure.moved !== undefined) {
    details.shard = failure.moved.shard;
    details.node_id = failure.moved.nodeId;
    details.addr = failure.moved.addr;
    details.map_version = failure.moved.mapVersion;
  }
  const error: WireError = { code: wireCodeOfKind[failure.kind], message: failure.message };
  if (Object.keys(details).length > 0) error.details = details;
  return error;
}

/**
 * Maps what a dispatcher's requests threw. Its count of internal errors
 * numbers their request ids; it belongs to the dispatcher (one per server),
 * so two servers in one process number their own.
 */
export class ThrownToWire {
  private internalErrors = 0;

  constructor(private readonly logger: Logger) {}

  /** An unexpected exception or rejection: UNAVAILABLE for storage failures, INTERNAL (logged) otherwise. */
  map(thrown: unknown, context: { op: string; id: number; connectionId: number }): WireError {
    if (thrown instanceof StorageUnavailableError) {
      // A failed commit is the engine's storage_unavailable, answered with the same code.
      return {
        code: wireCodeOfKind.storage_unavailable,
        message: `storage unavailable: ${thrown.message}`,
        details: { retry_after_ms: thrown.retryAfterMs },
      };
    }
    this.internalErrors++;
    const requestId = `${context.connectionId}-${context.id}-${this.internalErrors}`;
    this.logger.error("internal error", { request_id: requestId, op: context.op, connection: context.connectionId, error: thrown });
    return { code: "INTERNAL", message: `internal error (request id ${requestId})`, details: { request_id: requestId } };
  }
}
