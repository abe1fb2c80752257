// `orq ack RECEIPT... [--result TEXT]`: end deliveries successfully, with
// --result (UTF-8) kept as each item's result for outcome_retention_ms (`orq
// get` and `orq wait` show it). Stale receipts (the delivery already ended)
// are listed and make the exit code 3. With --result the ack goes to the
// --server node as it is (in a cluster, a receipt of a shard it does not
// serve answers MOVED).

import type { Command } from "commander";
import { clientCommand, exitCodes, onRun, type Session } from "../client-command.ts";

async function ackWithResult(session: Session, receipts: string[], result: string): Promise<{ acked: number; stale: string[] }> {
  const client = await session.client();
  const bytes = new TextEncoder().encode(result);
  const reply = await client.request("ack", { ns: session.ns, receipts, results: receipts.map(() => bytes) });
  return { acked: reply.acked as number, stale: reply.stale as string[] };
}

export function addAckCommand(program: Command): void {
  const command = clientCommand(program, "ack <receipts...>", "acknowledge deliveries (the item is done)").option(
    "--result <string>",
    "keep this result (UTF-8) with each item's outcome",
  );
  onRun(command, async (session, args, options) => {
    const receipts = args[0] as string[];
    const resultText = options.result as string | undefined;
    const result = resultText === undefined ? await (await session.cluster()).ack(session.ns, receipts) : await ackWithResult(session, receipts, resultText);
    return {
      json: result,
      text: [`acked ${result.acked}`, ...result.stale.map((r) => `stale ${r}`)].join("\n"),
      exitCode: result.stale.length > 0 ? exitCodes.partial : exitCodes.ok,
    };
  });
}
