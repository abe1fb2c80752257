// cluster: the shard map (which node owns each shard, and where to reach it),
// the same one hello carries. A single node has no map: BAD_REQUEST.

import { reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import type { Source } from "../request-reader.ts";

export const clusterOp: OpSpec = {
  namespace: "none",
  needsAuth: true,
  allowedWhileDraining: true,
  changesState: false,
  handle(_request: Source, _ns: string | null, ctx: OpContext): OpOutcome {
    const map = ctx.serverInfo.clusterMap ?? null;
    if (map === null) return { kind: "error", error: { code: "BAD_REQUEST", message: "this server is a single node, not part of a cluster" } };
    return reply({ cluster: map() });
  },
};
