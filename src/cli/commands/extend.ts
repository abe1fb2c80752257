// `orq extend RECEIPT... --lease-ms N [--metadata TEXT]`: set the leases to
// end N ms from now, replacing the items' metadata with --metadata (UTF-8: a
// long job's progress, which `orq get` and `orq wait` show).

import type { Command } from "commander";
import { clientCommand, exitCodes, intArg, onRun } from "../client-command.ts";

export function addExtendCommand(program: Command): void {
  const command = clientCommand(program, "extend <receipts...>", "set leases to end --lease-ms from now")
    .requiredOption("--lease-ms <n>", "new lease length from now", intArg(1, Number.MAX_SAFE_INTEGER))
    .option("--metadata <string>", "replace the items' metadata (UTF-8), e.g. progress");
  onRun(command, async (session, args, options) => {
    const client = await session.cluster();
    const receipts = args[0] as string[];
    const leaseMs = options.leaseMs as number;
    const metadata = options.metadata as string | undefined;
    const result = await client.extend(session.ns, receipts.map((receipt) => (metadata === undefined ? { receipt, leaseMs } : { receipt, leaseMs, metadata })));
    return {
      json: result,
      text: [`extended ${result.extended}`, ...result.stale.map((r) => `stale ${r}`)].join("\n"),
      exitCode: result.stale.length > 0 ? exitCodes.partial : exitCodes.ok,
    };
  });
}
