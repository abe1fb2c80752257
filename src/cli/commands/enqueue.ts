// `orq enqueue`: one item, payload from --payload, --payload-file (- = stdin)
// or, when neither is given and stdin is not a terminal, from stdin.
// Prints the item's id (an idempotency key that matches a live item prints
// that item's id).

import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { Option } from "commander";
import type { EnqueueItem } from "../../client/types.ts";
import { clientCommand, intArg, jsonObjectArg, listArg, onRun, UsageError } from "../client-command.ts";
import { addPreferenceOptions, preferenceFromOptions } from "../preference-options.ts";

const int32Min = -(2 ** 31);
const int32Max = 2 ** 31 - 1;
const uintMax = Number.MAX_SAFE_INTEGER;

function readPayload(options: Record<string, unknown>): Uint8Array | string {
  const inline = options.payload as string | undefined;
  const file = options.payloadFile as string | undefined;
  if (inline !== undefined && file !== undefined) throw new UsageError("give --payload or --payload-file, not both");
  if (inline !== undefined) return inline;
  const path = file ?? (process.stdin.isTTY ? null : "-");
  if (path === null) return new Uint8Array();
  try {
    return new Uint8Array(readFileSync(path === "-" ? 0 : path));
  } catch (error) {
    throw new UsageError(`cannot read ${path === "-" ? "stdin" : path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export function addEnqueueCommand(program: Command): void {
  const command = clientCommand(program, "enqueue", "enqueue one item and print its id")
    .requiredOption("--topic <topic>", "the topic (queue)")
    .option("--priority <n>", "lower is delivered first (default 0)", intArg(int32Min, int32Max))
    .option("--payload <string>", "the payload, as UTF-8")
    .option("--payload-file <path>", "read the payload from a file (- = stdin)")
    .option("--metadata <string>", "the metadata, as UTF-8")
    .option("--delay-ms <n>", "not deliverable before this long from now", intArg(0, uintMax))
    .option("--lease-ms <n>", "lease length of each delivery", intArg(1, uintMax))
    .option("--ttl-ms <n>", "remove the item this long after enqueue", intArg(0, uintMax))
    .option("--max-attempts <n>", "deliveries before it becomes a dead letter", intArg(1, uintMax))
    .addOption(new Option("--delivery <mode>", "what an expired lease does").choices(["at_least_once", "at_most_once"]))
    .option("--key <key>", "idempotency key (unique within the topic and group)")
    .option("--group <group>", "fairness group: deliveries rotate between a topic's groups, and policies bound them")
    .option("--requires <json>", 'requirements, e.g. \'{"gpu": true, "mem_gb": {"gte": 16}}\'', jsonObjectArg)
    .option("--after <ids>", "comma-separated ids that must be acked first", listArg);
  addPreferenceOptions(command)
    .addHelpText("after", "\nWith neither --payload nor --payload-file, the payload is read from stdin unless stdin is a terminal.\n");
  onRun(command, async (session, _args, options) => {
    const item: EnqueueItem = {
      topic: options.topic as string,
      payload: readPayload(options),
      priority: options.priority as number | undefined,
      metadata: options.metadata as string | undefined,
      delayMs: options.delayMs as number | undefined,
      leaseMs: options.leaseMs as number | undefined,
      ttlMs: options.ttlMs as number | undefined,
      maxAttempts: options.maxAttempts as number | undefined,
      delivery: options.delivery as EnqueueItem["delivery"],
      key: options.key as string | undefined,
      group: options.group as string | undefined,
      requires: options.requires as Record<string, unknown> | undefined,
      after: options.after as string[] | undefined,
      ...preferenceFromOptions(options),
    };
    const client = await session.cluster();
    const [id] = await client.enqueue(session.ns, [item]);
    return { json: { id }, text: id! };
  });
}
