export declare const errorCodes: readonly ["BAD_FRAME", "FRAME_TOO_LARGE", "BAD_REQUEST", "UNKNOWN_OP", "TOO_LARGE", "NOT_FOUND", "RATE_LIMITED", "UNAVAILABLE", "UNAUTHORIZED", "FORBIDDEN", "SHUTTING_DOWN", "INTERNAL", "MOVED"];
export type ErrorCode = (typeof errorCodes)[number];
/** Codes after which the server closes the connection: the byte stream can no longer be trusted. */
export declare const connectionClosingCodes: ReadonlySet<ErrorCode>;
export declare function isErrorCode(value: unknown): value is ErrorCode;
