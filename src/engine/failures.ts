// The engine's expected failures, as returned values: each op answers one of
// these instead of throwing, saying where the fault lies as a FailureLocation
// (failure-location.ts), and the server maps the code and renders the
// location as the protocol's error in one place (server/error-mapping.ts).

import type { Failure, FailureCode } from "./api.ts";

export type FailureResult = { ok: false; failure: Failure };

export function fail(code: FailureCode, message: string, extra: Omit<Failure, "code" | "message"> = {}): FailureResult {
  return { ok: false, failure: { code, message, ...extra } };
}

export function unavailable(retryAfterMs: number, message: string): FailureResult {
  return fail("UNAVAILABLE", message, { retryAfterMs });
}
