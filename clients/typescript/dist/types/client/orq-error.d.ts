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
export declare class OrqError extends Error {
    readonly code: ErrorCode | ClientErrorCode;
    readonly details: OrqErrorDetails;
    name: string;
    constructor(code: ErrorCode | ClientErrorCode, message: string, details?: OrqErrorDetails);
}
