// Dashboard sessions: a person signs in with a token and gets a random
// session id (the cookie), held here with the token's access (scope and
// role), a CSRF token for its forms, and an expiry. Time comes from the
// injected clock. The store is bounded (dashboardLimits.sessionsMax): past
// it the session closest to expiry is dropped. With no token configured
// there is one anonymous session with full access and no cookie; the
// request guard (request-guard.ts) then admits only loopback requests.
// In cluster mode the token a session signed in with is kept here too, in
// memory only, so the dashboard can ask the other nodes as that token
// (cluster-op-caller.ts); it never goes back to the browser.

import { randomBytes, timingSafeEqual } from "node:crypto";
import type { Clock } from "../lib/clock.ts";
import { dashboardLimits } from "../limits.ts";
import { allNamespaces, type Access } from "../server/auth.ts";
import type { Session } from "../server/op-types.ts";

export interface DashboardSession {
  /** The cookie value; null for the anonymous session (no token configured). */
  readonly id: string | null;
  /** What the dispatcher sees: the token's scope and role. */
  readonly opSession: Session;
  /** Echoed by every form; compared in constant time. */
  readonly csrfToken: string;
  readonly expiresAtMs: number;
}

/** Dashboard sessions get op-session ids far above any TCP connection id, so logs tell them apart. */
const opSessionIdBase = 2 ** 40;

function randomToken(): string {
  return randomBytes(32).toString("base64url");
}

export function sameSecret(presented: string, expected: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export class SessionStore {
  private readonly sessions = new Map<string, DashboardSession>();
  private nextOpSessionId = opSessionIdBase;
  /** The token each signed-in session presented, by its op session; gone with the session. */
  private readonly tokens = new WeakMap<Session, string>();
  /** The one session used when no token is configured. */
  readonly anonymous: DashboardSession;

  constructor(private readonly clock: Clock) {
    this.anonymous = {
      id: null,
      opSession: { connectionId: this.nextOpSessionId++, scope: allNamespaces, readOnly: false },
      csrfToken: randomToken(),
      expiresAtMs: Number.POSITIVE_INFINITY,
    };
  }

  get size(): number {
    return this.sessions.size;
  }

  /** A session for a valid token's access; `token` is kept (in memory) for asking other cluster nodes as it. */
  create(access: Access, token: string | null = null): DashboardSession {
    const nowMs = this.clock.nowMs();
    this.dropExpired(nowMs);
    if (this.sessions.size >= dashboardLimits.sessionsMax) {
      // Insertion order is expiry order (every session lives sessionMs), so the first is the oldest.
      const oldest = this.sessions.keys().next().value as string;
      this.sessions.delete(oldest);
    }
    const session: DashboardSession = {
      id: randomToken(),
      opSession: { connectionId: this.nextOpSessionId++, scope: access.scope, readOnly: access.readOnly },
      csrfToken: randomToken(),
      expiresAtMs: nowMs + dashboardLimits.sessionMs,
    };
    this.sessions.set(session.id as string, session);
    if (token !== null) this.tokens.set(session.opSession, token);
    return session;
  }

  /** The live session for a cookie value, or null (unknown or expired: an expired one is forgotten). */
  find(id: string): DashboardSession | null {
    const session = this.sessions.get(id);
    if (session === undefined) return null;
    if (session.expiresAtMs <= this.clock.nowMs()) {
      this.sessions.delete(id);
      return null;
    }
    return session;
  }

  /** The token a session signed in with; undefined for the anonymous session and for one signed in without it kept. */
  tokenOf(opSession: Session): string | undefined {
    return this.tokens.get(opSession);
  }

  delete(id: string): void {
    this.sessions.delete(id);
  }

  private dropExpired(nowMs: number): void {
    for (const [id, session] of this.sessions) {
      if (session.expiresAtMs > nowMs) break;
      this.sessions.delete(id);
    }
  }
}

/**
 * Sign-in attempts per client address in fixed one-minute windows
 * (dashboardLimits.signInsPerMinuteMax), for at most signInClientsMax
 * addresses (the stalest is forgotten first).
 */
export class SignInLimiter {
  private readonly windows = new Map<string, { startMs: number; attempts: number }>();
  private static readonly windowMs = 60_000;

  constructor(private readonly clock: Clock) {}

  /** Counts one attempt; returns the ms to wait when the address is over its limit, else 0. */
  attempt(address: string): number {
    const nowMs = this.clock.nowMs();
    let window = this.windows.get(address);
    if (window === undefined || nowMs - window.startMs >= SignInLimiter.windowMs) {
      this.windows.delete(address);
      if (this.windows.size >= dashboardLimits.signInClientsMax) this.windows.delete(this.windows.keys().next().value as string);
      window = { startMs: nowMs, attempts: 0 };
      this.windows.set(address, window);
    }
    if (window.attempts >= dashboardLimits.signInsPerMinuteMax) return window.startMs + SignInLimiter.windowMs - nowMs;
    window.attempts++;
    return 0;
  }
}
