// list: one page of a topic's items, read only (engine/reads/list.ts): ready items
// in delivery order, the others in enqueue order, optionally one state only.
// `after` is the cursor a previous page's `next` gave (opaque to clients; a
// string this server never handed out for this state filter is BAD_REQUEST).

import { formatListCursor, parseListCursor } from "../../engine/reads/list-cursor.ts";
import { liveStateNames } from "../../protocol/live-states.ts";
import { failed, namespacedOp, reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import { RequestReader, type Source } from "../request-reader.ts";
import { itemStateToWire } from "./wire-encoding.ts";

export const listOp: OpSpec = namespacedOp({
  needsAuth: true,
  allowedWhileDraining: true,
  changesState: false,
  handle(request: Source, ns: string, ctx: OpContext): OpOutcome {
    const reader = new RequestReader();
    const { limits } = ctx;
    const topic = reader.requiredString(request, "topic", 1, limits.topicBytesMax);
    const state = reader.oneOf(request, "state", liveStateNames);
    const limit = reader.int(request, "limit", { min: 1, max: limits.listPageMax, overMaxTooLarge: true });
    // Any length: a string that is not a cursor is BAD_REQUEST below, whatever its size.
    const afterText = reader.string(request, "after", 1, limits.frameBytesMax);
    if (reader.failure !== null || topic === null) return failed(reader.failure!);
    let after = null;
    if (afterText !== null) {
      after = parseListCursor(afterText, state);
      if (after === null) {
        reader.fail("BAD_REQUEST", "after", "is not a cursor this server gave for this state filter (pass a previous page's next)");
        return failed(reader.failure!);
      }
    }
    const page = ctx.engine.list(ns, topic, { state, limit: limit ?? limits.listPageDefault, after }, ctx.nowMs);
    const value: Source = { items: page.items.map(itemStateToWire) };
    if (page.next !== null) value.next = formatListCursor(page.next);
    return reply(value);
  },
});
