// `orq ack RECEIPT...`: end deliveries successfully. Stale receipts (the
// delivery already ended) are listed and make the exit code 3.

import type { Command } from "commander";
import { clientCommand, exitCodes, onRun } from "../client-command.ts";

export function addAckCommand(program: Command): void {
  const command = clientCommand(program, "ack <receipts...>", "acknowledge deliveries (the item is done)");
  onRun(command, async (session, args) => {
    const client = await session.cluster();
    const result = await client.ack(session.ns, args[0] as string[]);
    return {
      json: result,
      text: [`acked ${result.acked}`, ...result.stale.map((r) => `stale ${r}`)].join("\n"),
      exitCode: result.stale.length > 0 ? exitCodes.partial : exitCodes.ok,
    };
  });
}
