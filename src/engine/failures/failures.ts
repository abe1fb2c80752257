// The engine's expected failures, as returned values: each op answers one of
// these instead of throwing, naming what went wrong as a FailureKind
// (failure-kind.ts) and where the fault lies as a FailureLocation
// (failure-location.ts); the server maps the kind and renders the location as
// the protocol's error in one place (server/error-mapping.ts).

import type { Failure, FailureKind } from "../api.ts";

export type FailureResult = { ok: false; failure: Failure };

export function fail(kind: FailureKind, message: string, extra: Omit<Failure, "kind" | "message"> = {}): FailureResult {
  return { ok: false, failure: { kind, message, ...extra } };
}

/** The store does not take writes now: retry after `retryAfterMs`. */
export function storageUnavailable(retryAfterMs: number, message: string): FailureResult {
  return fail("storage_unavailable", message, { retryAfterMs });
}
