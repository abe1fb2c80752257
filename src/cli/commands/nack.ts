// `orq nack RECEIPT...`: end deliveries without success; the items are ready
// again after --delay-ms (or become dead letters at their last attempt).

import type { Command } from "commander";
import { clientCommand, exitCodes, intArg, onRun } from "../client-command.ts";

export function addNackCommand(program: Command): void {
  const command = clientCommand(program, "nack <receipts...>", "give deliveries back (retry after --delay-ms)")
    .option("--delay-ms <n>", "not deliverable again before this long from now (default 0)", intArg(0, Number.MAX_SAFE_INTEGER))
    .option("--metadata <string>", "replace the items' metadata (UTF-8)");
  onRun(command, async (session, args, options) => {
    const client = await session.cluster();
    const receipts = args[0] as string[];
    const result = await client.nack(
      session.ns,
      receipts.map((receipt) => ({ receipt, delayMs: options.delayMs as number | undefined, metadata: options.metadata as string | undefined })),
    );
    return {
      json: result,
      text: [`nacked ${result.nacked}`, ...result.stale.map((r) => `stale ${r}`)].join("\n"),
      exitCode: result.stale.length > 0 ? exitCodes.partial : exitCodes.ok,
    };
  });
}
