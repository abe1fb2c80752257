// A PageContext for rendering dashboard pages and actions without a server:
// the op caller's dispatcher is a script of replies per op, and every request
// it receives is recorded, so a test checks both what a page shows and which
// ops (with which fields) it called.

import { History } from "../../src/dashboard/history.ts";
import { OpCaller } from "../../src/dashboard/op-caller.ts";
import type { PageContext, ServerPanel } from "../../src/dashboard/page-context.ts";
import { ScopedInspector } from "../../src/dashboard/scoped-inspector.ts";
import type { EngineInspector } from "../../src/engine/reads/inspect.ts";
import { allNamespaces } from "../../src/server/auth.ts";

export type Fields = Record<string, unknown>;
/** An op's ok reply fields, or an error reply `{ error: {code, message} }`. */
export type Script = Record<string, (fields: Fields) => Fields>;

export interface Fixture {
  ctx: PageContext;
  requests: Fields[];
}

/** The anonymous full-access session's CSRF token in every fixture. */
export const fixtureCsrf = "csrf-token-of-the-fixture";

/** `inspector` stands in for the engine's inspect queries (none by default: a page that asks one fails). */
export function pageFixture(
  path: string,
  script: Script,
  options: { readOnly?: boolean; nowMs?: number; inspector?: EngineInspector; recentValues?: ServerPanel["recentValues"] } = {},
): Fixture {
  const requests: Fields[] = [];
  const dispatcher = {
    handleRequest(source: { send(reply: Fields): void }, request: Fields): void {
      requests.push(request);
      const answer = script[String(request.op)];
      if (answer === undefined) {
        source.send({ id: request.id, ok: false, error: { code: "UNKNOWN_OP", message: `no script for ${String(request.op)}` } });
        return;
      }
      const reply = answer(request);
      source.send(reply.error === undefined ? { id: request.id, ok: true, ...reply } : { id: request.id, ok: false, error: reply.error });
    },
  };
  const url = new URL(`http://127.0.0.1:7422${path}`);
  const ctx: PageContext = {
    session: { id: null, opSession: { connectionId: 1, scope: allNamespaces, readOnly: options.readOnly ?? false }, csrfToken: fixtureCsrf, expiresAtMs: Number.POSITIVE_INFINITY },
    ops: new OpCaller(dispatcher),
    inspector: new ScopedInspector(options.inspector ?? ({} as EngineInspector)),
    history: new History(),
    url,
    nowMs: options.nowMs ?? Date.UTC(2026, 11, 1, 12, 0, 0),
    serverInfo: { version: "0.0.0", nodeId: "test", shards: 1 },
    serverPanel: () => ({ commitMsP50: null, commitMsP99: null, commitSamples: 0, breaker: "closed", recentValues: options.recentValues ?? null }),
    ns: url.searchParams.get("ns") ?? "shop",
    namespaces: ["shop"],
    notice: null,
  };
  return { ctx, requests };
}
