// `orq explain ID...`: why each item is not being delivered right now, one
// reason a line in words (`--json`: the server's reasons, snake_case). An item
// with no reason is ready and first in line for a worker that asked. An id
// the server does not know prints "not found" and makes the exit code 3, as
// `orq get` does. On a cluster each id is asked of its shard's owner.

import type { Command } from "commander";
import type { ExplainReason, ItemExplanation } from "../../client/types.ts";
import { clientCommand, exitCodes, onRun } from "../client-command.ts";
import { block, isoTime } from "../output.ts";

/** A reason in the wire's snake_case, as the server sent it. */
function reasonToJson(r: ExplainReason): Record<string, unknown> {
  const out: Record<string, unknown> = { reason: r.reason };
  if (r.untilMs !== undefined) out.until_ms = r.untilMs;
  if (r.after !== undefined) out.after = r.after;
  if (r.deadReason !== undefined) out.dead_reason = r.deadReason;
  if (r.leased !== undefined) out.leased = r.leased;
  if (r.max !== undefined) out.max = r.max;
  if (r.nextAtMs !== undefined) out.next_at_ms = r.nextAtMs;
  if (r.kinds !== undefined) out.kinds = r.kinds;
  if (r.ahead !== undefined) out.ahead = r.ahead;
  return out;
}

function explanationToJson(e: ItemExplanation | null): Record<string, unknown> | null {
  return e === null ? null : { id: e.id, state: e.state, reasons: e.reasons.map(reasonToJson) };
}

function until(ms: number | undefined, otherwise: string): string {
  return ms === undefined ? otherwise : `until ${isoTime(ms)}`;
}

/** One reason in words. A reason this CLI does not know yet shows its name and details as JSON. */
export function reasonText(r: ExplainReason): string {
  switch (r.reason) {
    case "delayed":
      return `delayed ${until(r.untilMs, "")}`.trimEnd();
    case "waiting":
      return `waiting for ${(r.after ?? []).join(", ")} to be acked`;
    case "leased":
      return `leased ${until(r.untilMs, "")}`.trimEnd();
    case "dead":
      return r.deadReason === undefined ? "a dead letter" : `a dead letter (${r.deadReason})`;
    case "topic_paused":
    case "group_paused":
      return `${r.reason === "topic_paused" ? "topic" : "group"} paused ${until(r.untilMs, "until resumed")}`;
    case "topic_max_leased":
    case "group_max_leased":
      return `${r.reason === "topic_max_leased" ? "topic" : "group"} at its max leased (${r.leased ?? "?"} of ${r.max ?? "?"} leased)`;
    case "topic_rate":
    case "group_rate":
      return `${r.reason === "topic_rate" ? "topic" : "group"} out of rate tokens ${until(r.nextAtMs, "for now")}`;
    case "held_for_preferred":
      return `held for a worker that fits its prefers ${until(r.untilMs, "")}`.trimEnd();
    case "no_worker":
      return `no worker kind that asked may take it: ${(r.kinds ?? []).map((kind, i) => `kind ${i + 1} fails ${kind.failed.join(", ")}`).join("; ")}`;
    case "no_dequeue":
      return "no worker asked for this topic recently";
    case "behind":
      return `behind ${r.ahead === 1 ? "1 item that goes" : `${r.ahead ?? "?"} items that go`} first for every worker kind that may take it`;
    default: {
      const { reason, ...details } = reasonToJson(r);
      return Object.keys(details).length === 0 ? String(reason) : `${String(reason)} ${JSON.stringify(details)}`;
    }
  }
}

/** An item's explanation for people: id, state, then one `why` line per reason. */
export function explanationBlock(e: ItemExplanation): string {
  const reasons = e.reasons.length === 0 ? ["first in line for a worker that asked"] : e.reasons.map(reasonText);
  return block([["id", e.id], ["state", e.state], ...reasons.map((text) => ["why", text] as const)]);
}

export function addExplainCommand(program: Command): void {
  const command = clientCommand(program, "explain <ids...>", "say why items are not being delivered right now");
  onRun(command, async (session, args) => {
    const ids = args[0] as string[];
    const client = await session.cluster();
    const items = await client.explain(session.ns, ids);
    const text = items.map((item, index) => (item === null ? `${ids[index]}  not found` : explanationBlock(item))).join("\n\n");
    return {
      json: { items: items.map(explanationToJson) },
      text,
      exitCode: items.includes(null) ? exitCodes.partial : exitCodes.ok,
    };
  });
}
