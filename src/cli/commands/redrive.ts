// `orq redrive --topic T [ID...]`: make dead letters ready again with their
// attempts reset: the given ones (on a cluster, each on its shard's owner), or
// all of the topic's (on a cluster, every node's, summed).

import type { Command } from "commander";
import { clientCommand, onRun } from "../client-command.ts";

export function addRedriveCommand(program: Command): void {
  const command = clientCommand(program, "redrive [ids...]", "make dead letters ready again (all of the topic's, or the ids given)").requiredOption(
    "--topic <topic>",
    "the topic",
  );
  onRun(command, async (session, args, options) => {
    const ids = args[0] as string[] | undefined;
    const client = await session.cluster();
    const result = await client.redrive(session.ns, options.topic as string, ids !== undefined && ids.length > 0 ? ids : undefined);
    return { json: result, text: `redriven ${result.redriven}` };
  });
}
