// `orq ack RECEIPT... [--result TEXT]`: end deliveries successfully, with
// --result (UTF-8) kept as each item's result for outcome_retention_ms (`orq
// get` and `orq wait` show it). Stale receipts (the delivery already ended)
// are listed and make the exit code 3.

import type { Command } from "commander";
import { clientCommand, exitCodes, onRun } from "../client-command.ts";

export function addAckCommand(program: Command): void {
  const command = clientCommand(program, "ack <receipts...>", "acknowledge deliveries (the item is done)").option(
    "--result <string>",
    "keep this result (UTF-8) with each item's outcome",
  );
  onRun(command, async (session, args, options) => {
    const receipts = args[0] as string[];
    const resultText = options.result as string | undefined;
    const client = await session.cluster();
    const result = await client.ack(session.ns, receipts, resultText === undefined ? {} : { results: receipts.map(() => resultText) });
    return {
      json: result,
      text: [`acked ${result.acked}`, ...result.stale.map((r) => `stale ${r}`)].join("\n"),
      exitCode: result.stale.length > 0 ? exitCodes.partial : exitCodes.ok,
    };
  });
}
