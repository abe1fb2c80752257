// Building the dashboard's HTTP answers: every one carries the security
// headers (request-guard.ts) and no-store caching, except embedded assets.

import { OpError } from "./op-caller.ts";
import { securityHeaders } from "./request-guard.ts";
import type { Html } from "./html.ts";

export function htmlResponse(body: Html | string, status = 200, extra: Record<string, string> = {}): Response {
  return new Response(String(body), {
    status,
    headers: { ...securityHeaders, "content-type": "text/html; charset=utf-8", "cache-control": "no-store", ...extra },
  });
}

export function jsonResponse(value: unknown, status = 200): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { ...securityHeaders, "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
  });
}

export function textResponse(body: string, status: number, extra: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { ...securityHeaders, "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", ...extra } });
}

export function redirect(location: string, extra: Record<string, string> = {}): Response {
  return new Response(null, { status: 303, headers: { ...securityHeaders, location, "cache-control": "no-store", ...extra } });
}

/** The HTTP status for an op's error code. */
export function statusOf(error: unknown): number {
  if (!(error instanceof OpError)) return 500;
  switch (error.error.code) {
    case "UNAUTHORIZED":
      return 401;
    case "FORBIDDEN":
      return 403;
    case "BAD_REQUEST":
    case "TOO_LARGE":
      return 400;
    case "NOT_FOUND":
      return 404;
    case "UNKNOWN_OP":
      return 501;
    case "RATE_LIMITED":
      return 429;
    case "UNAVAILABLE":
    case "SHUTTING_DOWN":
      return 503;
    default:
      return 500;
  }
}

/**
 * Only a local path may be a redirect target (no scheme, no //host): never an
 * open redirect. Whitespace and control characters are refused too, since
 * browsers drop tabs and newlines from URLs ("/\t/evil" would become "//evil").
 */
export function localPath(value: string | null, fallback: string): string {
  if (value === null || !value.startsWith("/") || value.startsWith("//") || /[\u0000-\u0020\u007f\\]/.test(value)) return fallback;
  return value;
}
