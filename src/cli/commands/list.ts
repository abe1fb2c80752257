// `orq list --topic T`: a topic's items, ready ones in delivery order, the
// others in enqueue order (--state for one state only), one page (--limit,
// --after) or, with --all, every page. A page the server cut short (its walk
// over a large store stopped early) is topped up from the next one, so a
// person sees a full page. On a cluster, every node's items: each page asks
// every node for its share and merges them, and the cursor holds each node's.

import { type Command, InvalidArgumentError } from "commander";
import type { ItemState } from "../../client/types.ts";
import { defaultLimits } from "../../limits.ts";
import { liveStateNames as states } from "../../protocol/live-states.ts";
import { clientCommand, intArg, onRun } from "../client-command.ts";
import { itemStateToJson, itemStatesTable } from "../output.ts";

/** Requests one `orq list` makes at most (10,000): a bound on a runaway loop over a huge topic. */
const requestsMax = 10_000;
/** Items shown without --limit: the server's default page. */
const pageDefault = defaultLimits.listPageDefault;
/** Items per request at most: the server's largest page. */
const pageMax = defaultLimits.listPageMax;

export function addListCommand(program: Command): void {
  const command = clientCommand(program, "list", "list a topic's items: ready ones in delivery order, the others in enqueue order")
    .requiredOption("--topic <topic>", "the topic")
    .option("--state <state>", `only items in this state (${states.join(", ")})`, stateArg)
    .option("--limit <n>", `items to show (default ${pageDefault}; at most ${pageMax} per request)`, intArg(1, 1_000_000))
    .option("--after <cursor>", "continue where a listing stopped (the `more:` cursor it printed)")
    .option("--all", `every item of the topic (in pages of up to ${pageMax})`);
  onRun(command, async (session, _args, options) => {
    const client = await session.cluster();
    const all = options.all === true;
    const wanted = all ? Number.POSITIVE_INFINITY : ((options.limit as number | undefined) ?? pageDefault);
    const items: ItemState[] = [];
    let after = options.after as string | undefined;
    let next: string | null = null;
    for (let request = 0; request < requestsMax && items.length < wanted; request++) {
      const limit = Math.min(pageMax, wanted - items.length);
      const page = await client.list(session.ns, options.topic as string, { state: options.state as ItemState["state"] | undefined, limit, after });
      items.push(...page.items);
      next = page.next;
      if (next === null) break;
      after = next;
    }
    const more = next === null ? "" : `\nmore: --after ${JSON.stringify(next)}`;
    return {
      json: { items: items.map(itemStateToJson), next },
      text: items.length === 0 ? more.trimStart() : itemStatesTable(items) + more,
      note: items.length === 0 ? "no items" : undefined,
    };
  });
}

function stateArg(value: string): string {
  if (!(states as readonly string[]).includes(value)) throw new InvalidArgumentError(`must be one of ${states.join(", ")}.`);
  return value;
}
