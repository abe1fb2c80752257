import type { ErrorCode } from "../protocol/error-codes.ts";
/** Raised by the client itself, never sent by a server. */
export type ClientErrorCode = "TIMEOUT" | "DISCONNECTED" | "CLOSED" | "BAD_REPLY";
export interface OrqErrorDetails {
    field?: string;
    index?: number;
    retryAfterMs?: number;
    requestId?: string;
}
export declare class OrqError extends Error {
    readonly code: ErrorCode | ClientErrorCode;
    readonly details: OrqErrorDetails;
    name: string;
    constructor(code: ErrorCode | ClientErrorCode, message: string, details?: OrqErrorDetails);
}
