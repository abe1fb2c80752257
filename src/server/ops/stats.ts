// stats: the engine's counters and gauges plus the server's own, for one
// namespace (`ns`), or for every namespace the connection's token may see.
// The engine names its fields in camelCase; the wire uses snake_case, so keys
// are converted here, except the keys of maps named `namespaces` and
// `topics`, which are names chosen by users and pass through unchanged, and
// the whole of a value named `requires` (an unmatchable signature's
// requirements: feature names are the client's, and `gpuModel` must stay
// `gpuModel`). Maps inside arrays are converted like any other.

import { scopeList } from "../auth.ts";
import { reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import type { Source } from "../request-reader.ts";

/** Maps whose keys are user-chosen names, not field names. */
const nameMaps = new Set(["namespaces", "topics"]);

/** Values copied as they are: their keys are user-chosen feature names and operators. */
const verbatimValues = new Set(["requires"]);

function snakeCase(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
}

type Task = { from: Record<string, unknown>; to: Source; keysAreNames: boolean };

/** A map queued for conversion; anything else as it is. */
function copyElement(value: unknown, work: Task[]): unknown {
  if (!isMap(value)) return value;
  const child: Source = {};
  work.push({ from: value, to: child, keysAreNames: false });
  return child;
}

/** Copy with field names in snake_case; iterative, and the engine's stats are a few levels deep. */
export function statsToWire(stats: Record<string, unknown>): Source {
  const root: Source = {};
  const work: Task[] = [{ from: stats, to: root, keysAreNames: false }];
  while (work.length > 0) {
    const { from, to, keysAreNames } = work.pop()!;
    for (const [key, value] of Object.entries(from)) {
      const wireKey = keysAreNames ? key : snakeCase(key);
      if (!keysAreNames && verbatimValues.has(key)) {
        to[wireKey] = value;
      } else if (isMap(value)) {
        const child: Source = {};
        to[wireKey] = child;
        work.push({ from: value, to: child, keysAreNames: !keysAreNames && nameMaps.has(key) });
      } else {
        // Arrays in stats hold maps or scalars (never arrays), so one level is enough.
        to[wireKey] = Array.isArray(value) ? value.map((element) => copyElement(element, work)) : value;
      }
    }
  }
  return root;
}

export const statsOp: OpSpec = {
  namespace: "optional",
  needsAuth: true,
  allowedWhileDraining: true,
  changesState: false,
  handle(_request: Source, ns: string | null, ctx: OpContext): OpOutcome {
    const scope = ctx.session.scope;
    const namespaces = ns !== null ? [ns] : scope === null ? [] : scopeList(scope);
    const value = statsToWire(ctx.engine.stats(namespaces, ctx.nowMs));
    value.server = ctx.serverStats();
    return reply(value);
  },
};
