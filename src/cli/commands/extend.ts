// `orq extend RECEIPT... --lease-ms N`: set the leases to end N ms from now.

import type { Command } from "commander";
import { clientCommand, exitCodes, intArg, onRun } from "../client-command.ts";

export function addExtendCommand(program: Command): void {
  const command = clientCommand(program, "extend <receipts...>", "set leases to end --lease-ms from now").requiredOption(
    "--lease-ms <n>",
    "new lease length from now",
    intArg(1, Number.MAX_SAFE_INTEGER),
  );
  onRun(command, async (session, args, options) => {
    const client = await session.cluster();
    const receipts = args[0] as string[];
    const result = await client.extend(session.ns, receipts.map((receipt) => ({ receipt, leaseMs: options.leaseMs as number })));
    return {
      json: result,
      text: [`extended ${result.extended}`, ...result.stale.map((r) => `stale ${r}`)].join("\n"),
      exitCode: result.stale.length > 0 ? exitCodes.partial : exitCodes.ok,
    };
  });
}
