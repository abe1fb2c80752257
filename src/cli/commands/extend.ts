// `orq extend RECEIPT... --lease-ms N [--metadata TEXT]`: set the leases to
// end N ms from now, replacing the items' metadata with --metadata (UTF-8: a
// long job's progress, which `orq get` and `orq wait` show). With --metadata
// the request goes to the --server node as it is (in a cluster, a receipt of
// a shard it does not serve answers MOVED).

import type { Command } from "commander";
import { clientCommand, exitCodes, intArg, onRun, type Session } from "../client-command.ts";

async function extendWithMetadata(session: Session, receipts: string[], leaseMs: number, metadata: string): Promise<{ extended: number; stale: string[] }> {
  const client = await session.client();
  const bytes = new TextEncoder().encode(metadata);
  const reply = await client.request("extend", { ns: session.ns, items: receipts.map((receipt) => ({ receipt, lease_ms: leaseMs, metadata: bytes })) });
  return { extended: reply.extended as number, stale: reply.stale as string[] };
}

export function addExtendCommand(program: Command): void {
  const command = clientCommand(program, "extend <receipts...>", "set leases to end --lease-ms from now")
    .requiredOption("--lease-ms <n>", "new lease length from now", intArg(1, Number.MAX_SAFE_INTEGER))
    .option("--metadata <string>", "replace the items' metadata (UTF-8), e.g. progress");
  onRun(command, async (session, args, options) => {
    const receipts = args[0] as string[];
    const leaseMs = options.leaseMs as number;
    const metadata = options.metadata as string | undefined;
    const result =
      metadata === undefined
        ? await (await session.cluster()).extend(session.ns, receipts.map((receipt) => ({ receipt, leaseMs })))
        : await extendWithMetadata(session, receipts, leaseMs, metadata);
    return {
      json: result,
      text: [`extended ${result.extended}`, ...result.stale.map((r) => `stale ${r}`)].join("\n"),
      exitCode: result.stale.length > 0 ? exitCodes.partial : exitCodes.ok,
    };
  });
}
