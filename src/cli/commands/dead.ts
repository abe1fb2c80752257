// `orq dead --topic T`: the topic's dead letters, with why each died. On a
// cluster, every node's, taken from the nodes in turn up to --limit.

import type { Command } from "commander";
import { clientCommand, intArg, onRun } from "../client-command.ts";
import { itemStateBlock, itemStateToJson } from "../output.ts";

export function addDeadCommand(program: Command): void {
  const command = clientCommand(program, "dead", "list a topic's dead letters")
    .requiredOption("--topic <topic>", "the topic")
    .option("--limit <n>", "at most this many", intArg(1, 1_000_000));
  onRun(command, async (session, _args, options) => {
    const client = await session.cluster();
    const items = await client.dead(session.ns, options.topic as string, { limit: options.limit as number | undefined });
    return {
      json: { items: items.map(itemStateToJson) },
      text: items.map(itemStateBlock).join("\n\n"),
      note: items.length === 0 ? "no dead letters" : undefined,
    };
  });
}
