// stats: the engine's counters and gauges plus the server's own, for one
// namespace (`ns`), or for every namespace the connection's token may see.
// The engine names its fields in camelCase; the wire uses snake_case, so keys
// are converted here, except the keys of maps named `namespaces` and
// `topics`, which are names chosen by users and pass through unchanged.

import { scopeList } from "../auth.ts";
import { reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import type { Source } from "../request-reader.ts";

/** Maps whose keys are user-chosen names, not field names. */
const nameMaps = new Set(["namespaces", "topics"]);

function snakeCase(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** Copy with field names in snake_case; iterative, and the engine's stats are a few levels deep. */
export function statsToWire(stats: Record<string, unknown>): Source {
  const root: Source = {};
  const work: Array<{ from: Record<string, unknown>; to: Source; keysAreNames: boolean }> = [
    { from: stats, to: root, keysAreNames: false },
  ];
  while (work.length > 0) {
    const { from, to, keysAreNames } = work.pop()!;
    for (const [key, value] of Object.entries(from)) {
      const wireKey = keysAreNames ? key : snakeCase(key);
      if (typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)) {
        const child: Source = {};
        to[wireKey] = child;
        work.push({ from: value as Record<string, unknown>, to: child, keysAreNames: !keysAreNames && nameMaps.has(key) });
      } else {
        to[wireKey] = value;
      }
    }
  }
  return root;
}

export const statsOp: OpSpec = {
  namespace: "optional",
  needsAuth: true,
  allowedWhileDraining: true,
  handle(_request: Source, ns: string | null, ctx: OpContext): OpOutcome {
    const scope = ctx.session.scope;
    const namespaces = ns !== null ? [ns] : scope === null ? [] : scopeList(scope);
    const value = statsToWire(ctx.engine.stats(namespaces, ctx.nowMs));
    value.server = ctx.serverStats();
    return reply(value);
  },
};
