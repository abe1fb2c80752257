export declare const errorCodes: readonly ["BAD_FRAME", "FRAME_TOO_LARGE", "BAD_REQUEST", "UNKNOWN_OP", "TOO_LARGE", "NOT_FOUND", "RATE_LIMITED", "UNAVAILABLE", "UNAUTHORIZED", "FORBIDDEN", "SHUTTING_DOWN", "INTERNAL", "MOVED"];
export type ErrorCode = (typeof errorCodes)[number];
export declare function isErrorCode(value: unknown): value is ErrorCode;
