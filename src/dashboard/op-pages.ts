// Reading a paged op (`policies`, `groups`: entries in name order, `next`
// passed back as `after`) to its end or to a bound on entries, for a page that
// must sort or look up across the whole list rather than show one op page.
// The bound keeps one page view to a few op calls however large the topic.

import type { OpName } from "../protocol/op-names.ts";
import type { Session } from "../server/op-types.ts";
import type { OpCaller } from "./op-caller.ts";
import { wireMaps, type WireMap } from "./wire-values.ts";

/** Entries asked per call: the contract's page for `policies` and `groups` (limit 1000). */
const entriesPerCall = 1000;

export interface PagedEntries {
  entries: WireMap[];
  /** False when the bound stopped the reading before the op's last page. */
  complete: boolean;
}

/** Calls `op` with `fields` page after page, collecting its `listField` entries, until `next` is absent or `entriesMax` are read. */
export async function readPages(ops: OpCaller, session: Session, op: OpName, fields: Record<string, unknown>, listField: string, entriesMax: number): Promise<PagedEntries> {
  const entries: WireMap[] = [];
  let after: string | undefined;
  while (entries.length < entriesMax) {
    const limit = Math.min(entriesPerCall, entriesMax - entries.length);
    const reply = await ops.callOrThrow(session, op, { ...fields, limit, after });
    const page = wireMaps(reply[listField]);
    entries.push(...page);
    const next = reply.next;
    if (typeof next !== "string") return { entries, complete: true };
    // An empty page that still names a next one would repeat forever: stop, and say the list may go on.
    if (page.length === 0) break;
    after = next;
  }
  return { entries, complete: false };
}
