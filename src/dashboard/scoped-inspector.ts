// The one gate between a dashboard session and the engine's read-only
// inspect queries (src/engine/reads/inspect.ts), which no op answers: each call
// checks the session's namespace scope exactly as the dispatcher does for an
// op (scopeAllows), and answers FORBIDDEN the same way. Everything else the
// dashboard shows comes through the ops (op-caller.ts).

import type { EngineInspector, MatchingView } from "../engine/reads/inspect.ts";
import { scopeAllows } from "../server/auth.ts";
import type { Session } from "../server/op-types.ts";
import { OpError } from "./op-caller.ts";

export class ScopedInspector {
  constructor(private readonly inspector: EngineInspector) {}

  /** Throws FORBIDDEN (as an OpError) unless the session may see `ns`; also used for the history charts. */
  check(session: Session, what: string, ns: string): void {
    if (session.scope === null) throw new OpError(what, { code: "UNAUTHORIZED", message: "sign in first" });
    if (!scopeAllows(session.scope, ns)) throw new OpError(what, { code: "FORBIDDEN", message: `this token may not use namespace ${JSON.stringify(ns)}` });
  }

  matchingView(session: Session, ns: string, topic: string, nowMs: number): MatchingView {
    this.check(session, "matching", ns);
    return this.inspector.matchingView(ns, topic, nowMs);
  }

  idByKey(session: Session, ns: string, topic: string, key: string): string | null {
    this.check(session, "lookup by key", ns);
    return this.inspector.idByKey(ns, topic, key);
  }

  readySinceMs(session: Session, ns: string, topics: readonly string[]): Array<number | null> {
    this.check(session, "topics", ns);
    return this.inspector.readySinceMs(ns, topics);
  }
}
