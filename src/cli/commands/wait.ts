// `orq wait ID... [--wait-ms N]`: wait until every item has ended (or names
// nothing the server knows), at most --wait-ms, and show each item's state
// then, as `orq get` does: an ended item with its outcome and `ack` result, a
// live one with its state and metadata (a long job's progress). Exit code 0
// when every item ended, 3 when any is still live or not found. In a cluster
// each id's shard owner is asked (OrqClusterClient.waitFor).

import type { Command } from "commander";
import { defaultLimits } from "../../limits.ts";
import { clientCommand, exitCodes, intArg, onRun } from "../client-command.ts";
import { itemStateBlock, itemStateToJson } from "../output.ts";

/** The wait when --wait-ms is not given (30 s): long enough for a short job, well under the server's maximum. */
const waitMsDefault = 30_000;

export function addWaitCommand(program: Command): void {
  const command = clientCommand(program, "wait <ids...>", "wait for items to end; show their states and results").option(
    "--wait-ms <n>",
    `longest wait (default ${waitMsDefault}, at most ${defaultLimits.waitMsMax})`,
    intArg(0, defaultLimits.waitMsMax),
  );
  onRun(command, async (session, args, options) => {
    const ids = args[0] as string[];
    const waitMs = (options.waitMs as number | undefined) ?? waitMsDefault;
    const client = await session.cluster();
    const items = await client.waitFor(session.ns, ids, waitMs);
    const text = items.map((item, index) => (item === null ? `${ids[index]}  not found` : itemStateBlock(item))).join("\n\n");
    const allEnded = items.every((item) => item !== null && item.state === "ended");
    return { json: { items: items.map(itemStateToJson) }, text, exitCode: allEnded ? exitCodes.ok : exitCodes.partial };
  });
}
