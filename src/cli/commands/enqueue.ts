// `orq enqueue`: one item, payload from --payload, --payload-file (- = stdin)
// or, when neither is given and stdin is not a terminal, from stdin.
// Prints the item's id (an idempotency key that matches a live item prints
// that item's id).

import type { Command } from "commander";
import { clientCommand, listArg, onRun } from "../client-command.ts";
import { addItemOptions, itemFromOptions } from "../item-options.ts";

export function addEnqueueCommand(program: Command): void {
  const command = addItemOptions(clientCommand(program, "enqueue", "enqueue one item and print its id"))
    .option("--key <key>", "idempotency key (unique within the topic and group)")
    .option("--after <ids>", "comma-separated ids that must be acked first", listArg)
    .addHelpText("after", "\nWith neither --payload nor --payload-file, the payload is read from stdin unless stdin is a terminal.\n");
  onRun(command, async (session, _args, options) => {
    const item = { ...itemFromOptions(options), key: options.key as string | undefined, after: options.after as string[] | undefined };
    const client = await session.cluster();
    const [id] = await client.enqueue(session.ns, [item]);
    return { json: { id }, text: id! };
  });
}
