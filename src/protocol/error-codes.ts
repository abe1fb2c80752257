// The contract's error codes, and which of them end the connection. Shared by
// the server (which sends them) and the client (which raises them).

export const errorCodes = [
  "BAD_FRAME",
  "FRAME_TOO_LARGE",
  "BAD_REQUEST",
  "UNKNOWN_OP",
  "TOO_LARGE",
  "NOT_FOUND",
  "RATE_LIMITED",
  "UNAVAILABLE",
  "UNAUTHORIZED",
  "FORBIDDEN",
  "SHUTTING_DOWN",
  "INTERNAL",
  "MOVED",
] as const;

export type ErrorCode = (typeof errorCodes)[number];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && (errorCodes as readonly string[]).includes(value);
}
