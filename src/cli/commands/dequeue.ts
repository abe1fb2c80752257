// `orq dequeue`: lease up to --count ready items of one or more topics,
// optionally waiting (--wait-ms) and matching (--capabilities). Prints each
// delivery with its receipt, which ack, nack and extend take.

import type { Command } from "commander";
import { clientCommand, intArg, jsonObjectArg, listArg, onRun } from "../client-command.ts";
import { deliveryBlock, deliveryToJson } from "../output.ts";

export function addDequeueCommand(program: Command): void {
  const command = clientCommand(program, "dequeue", "lease ready items and print them with their receipts")
    .requiredOption("--topic <topics>", "topic, or comma-separated topics", listArg)
    .option("--count <n>", "items per topic (default 1)", intArg(1, 1_000_000))
    .option("--wait-ms <n>", "wait up to this long for items (default 0)", intArg(0, Number.MAX_SAFE_INTEGER))
    .option("--lease-ms <n>", "lease length (default: each item's own)", intArg(1, Number.MAX_SAFE_INTEGER))
    .option("--capabilities <json>", 'what this worker has, e.g. \'{"gpu": true, "mem_gb": 32}\'', jsonObjectArg);
  onRun(command, async (session, _args, options) => {
    const count = (options.count as number | undefined) ?? 1;
    const client = await session.cluster();
    const items = await client.dequeue(session.ns, {
      topics: (options.topic as string[]).map((topic) => ({ topic, count })),
      capabilities: options.capabilities as Record<string, unknown> | undefined,
      waitMs: options.waitMs as number | undefined,
      leaseMs: options.leaseMs as number | undefined,
    });
    return {
      json: { items: items.map(deliveryToJson) },
      text: items.map(deliveryBlock).join("\n\n"),
      note: items.length === 0 ? "no items ready" : undefined,
    };
  });
}
