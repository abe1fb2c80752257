// The error every failed client call rejects with: a protocol error code from
// the server, or one of the client's own (TIMEOUT, DISCONNECTED, CLOSED).

import type { ErrorCode } from "../protocol/error-codes.ts";

/** Raised by the client itself, never sent by a server. */
export type ClientErrorCode = "TIMEOUT" | "DISCONNECTED" | "CLOSED" | "BAD_REPLY";

export interface OrqErrorDetails {
  field?: string;
  index?: number;
  retryAfterMs?: number;
  requestId?: string;
  /** MOVED (cluster mode): the shard the request needed, its owner, where to reach it, and the map version that says so. */
  shard?: number;
  nodeId?: string;
  addr?: string;
  mapVersion?: number;
}

export class OrqError extends Error {
  override name = "OrqError";
  constructor(
    readonly code: ErrorCode | ClientErrorCode,
    message: string,
    readonly details: OrqErrorDetails = {},
  ) {
    super(`${code}: ${message}`);
  }
}
