// ping: the server's clock, for liveness checks and round-trip measurements.

import { reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import type { Source } from "../request-reader.ts";

export const pingOp: OpSpec = {
  namespace: "none",
  needsAuth: false,
  allowedWhileDraining: true,
  changesState: false,
  handle(_request: Source, _ns: string | null, ctx: OpContext): OpOutcome {
    return reply({ now_ms: ctx.nowMs });
  },
};
