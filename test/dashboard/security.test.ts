// Goal: the dashboard's request guard and sessions: loopback and Host checks
// (DNS rebinding), the Origin check, session expiry and bound, CSRF
// comparison, and the sign-in rate limit at limit-1, limit and limit+1.
// Time comes from a ManualClock.

import { describe, expect, test } from "bun:test";
import { anonymousAllowed, contentSecurityPolicy, hostHeaderName, sameOrigin } from "../../src/dashboard/request-guard.ts";
import { sameSecret, SessionStore, SignInLimiter } from "../../src/dashboard/sessions.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { dashboardLimits } from "../../src/limits.ts";
import { allNamespaces } from "../../src/server/auth.ts";

describe("request guard", () => {
  test("without tokens: only a loopback-bound dashboard reached by a loopback Host name", () => {
    for (const host of ["127.0.0.1:7422", "localhost:7422", "localhost", "[::1]:7422", "127.1.2.3"]) expect(anonymousAllowed("127.0.0.1", host)).toBe(true);
    for (const host of ["evil.example:7422", "127.0.0.1.evil.example", "10.0.0.1:7422", "", "localhost.evil:80"]) expect(anonymousAllowed("127.0.0.1", host)).toBe(false);
    expect(anonymousAllowed("127.0.0.1", null)).toBe(false);
    // Bound to every interface or a LAN address: refused whatever the Host says.
    for (const bound of ["0.0.0.0", "::", "10.0.0.5"]) expect(anonymousAllowed(bound, "127.0.0.1:7422")).toBe(false);
    expect(anonymousAllowed("::1", "[::1]:7422")).toBe(true);
  });

  test("Host header names", () => {
    expect(hostHeaderName("[::1]:7422")).toBe("[::1]");
    expect(hostHeaderName("example.com:80")).toBe("example.com");
    expect(hostHeaderName("example.com")).toBe("example.com");
  });

  test("a change must come from the dashboard's own origin", () => {
    expect(sameOrigin("http://127.0.0.1:7422", "127.0.0.1:7422")).toBe(true);
    expect(sameOrigin("http://evil.example", "127.0.0.1:7422")).toBe(false);
    expect(sameOrigin("http://127.0.0.1:7423", "127.0.0.1:7422")).toBe(false);
    expect(sameOrigin("null", "127.0.0.1:7422")).toBe(false);
    expect(sameOrigin(null, "127.0.0.1:7422")).toBe(false);
  });

  test("the CSP allows no inline script or style", () => {
    expect(contentSecurityPolicy).toContain("script-src 'self'");
    expect(contentSecurityPolicy).toContain("style-src 'self'");
    expect(contentSecurityPolicy).not.toContain("unsafe");
  });
});

describe("sessions", () => {
  const access = { scope: allNamespaces, readOnly: true };

  test("a session lives sessionMs, then is gone", () => {
    const clock = new ManualClock();
    const store = new SessionStore(clock);
    const session = store.create(access);
    expect(session.opSession.readOnly).toBe(true);
    clock.advance(dashboardLimits.sessionMs - 1);
    expect(store.find(session.id as string)).toBe(session);
    clock.advance(1);
    expect(store.find(session.id as string)).toBeNull();
    expect(store.size).toBe(0);
  });

  test("ids and CSRF tokens are random and distinct; CSRF compares exactly", () => {
    const store = new SessionStore(new ManualClock());
    const a = store.create(access);
    const b = store.create(access);
    expect(a.id).not.toBe(b.id);
    expect(a.csrfToken).not.toBe(b.csrfToken);
    expect((a.id as string).length).toBeGreaterThanOrEqual(40);
    expect(sameSecret(a.csrfToken, a.csrfToken)).toBe(true);
    expect(sameSecret(b.csrfToken, a.csrfToken)).toBe(false);
    expect(sameSecret("", a.csrfToken)).toBe(false);
    expect(a.opSession.connectionId).not.toBe(b.opSession.connectionId);
  });

  test("at most sessionsMax live sessions: the oldest is dropped", () => {
    const store = new SessionStore(new ManualClock());
    const first = store.create(access);
    for (let i = 1; i < dashboardLimits.sessionsMax; i++) store.create(access);
    expect(store.size).toBe(dashboardLimits.sessionsMax);
    expect(store.find(first.id as string)).toBe(first);
    store.create(access);
    expect(store.size).toBe(dashboardLimits.sessionsMax);
    expect(store.find(first.id as string)).toBeNull();
  });
});

describe("sign-in rate limit", () => {
  test("signInsPerMinuteMax attempts per address per minute; others unaffected; the window resets", () => {
    const clock = new ManualClock();
    const limiter = new SignInLimiter(clock);
    for (let i = 0; i < dashboardLimits.signInsPerMinuteMax - 1; i++) expect(limiter.attempt("a")).toBe(0);
    expect(limiter.attempt("a")).toBe(0); // the limit-th attempt
    clock.advance(10_000);
    expect(limiter.attempt("a")).toBe(50_000); // limit + 1: wait for the window's end
    expect(limiter.attempt("b")).toBe(0);
    clock.advance(50_000);
    expect(limiter.attempt("a")).toBe(0);
  });
});

describe("redirect targets", () => {
  test("only local paths; no scheme, host, backslash, whitespace or control character", async () => {
    const { localPath } = await import("../../src/dashboard/responses.ts");
    expect(localPath("/topics?ns=a&sort=ready", "/")).toBe("/topics?ns=a&sort=ready");
    for (const bad of ["//evil.example", "https://evil.example", "/\t/evil.example", "/\\evil.example", "/\n/evil", "evil", "", null]) {
      expect(localPath(bad, "/fallback")).toBe("/fallback");
    }
  });
});
