// Who may talk to the dashboard at all, and the headers every answer
// carries. With no token configured the dashboard has no sign-in, so it
// answers only when it is bound to a loopback address AND the request's Host
// header names a loopback host: a web page elsewhere that rebinds its own DNS
// name to 127.0.0.1 sends its own name as Host and is refused (DNS
// rebinding). Changes (POST) must also come from the dashboard's own origin
// (the Origin header) and carry the session's CSRF token (checked by the
// caller). The Content-Security-Policy allows scripts, styles, images and
// fetches from the dashboard's own origin only: no inline script or style.

import { isLoopbackHost } from "../server/loopback-host.ts";

/** The bound address's check, the listeners' one (server/loopback-host.ts). */
export { isLoopbackHost };

/** The hostname part of a Host header ("127.0.0.1:7422", "[::1]:7422", "localhost"). */
export function hostHeaderName(hostHeader: string): string {
  if (hostHeader.startsWith("[")) {
    const end = hostHeader.indexOf("]");
    return end === -1 ? hostHeader : hostHeader.slice(0, end + 1);
  }
  const colon = hostHeader.lastIndexOf(":");
  return colon === -1 ? hostHeader : hostHeader.slice(0, colon);
}

/** Without tokens: only a loopback-bound dashboard, reached by a loopback Host name. */
export function anonymousAllowed(boundHost: string, hostHeader: string | null): boolean {
  return isLoopbackHost(boundHost) && hostHeader !== null && isLoopbackHost(hostHeaderName(hostHeader));
}

/** A change must come from a page of this dashboard: Origin equal to http://<Host>. */
export function sameOrigin(originHeader: string | null, hostHeader: string | null): boolean {
  if (originHeader === null || hostHeader === null) return false;
  return originHeader === `http://${hostHeader}` || originHeader === `https://${hostHeader}`;
}

export const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

export const securityHeaders: Readonly<Record<string, string>> = Object.freeze({
  "content-security-policy": contentSecurityPolicy,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  // Not no-referrer: with it, browsers send `Origin: null` on form posts, and the Origin check needs the real one.
  "referrer-policy": "same-origin",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
});
