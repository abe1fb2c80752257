// `orq get ID...`: each item's state (or how it ended). An id the server does
// not know (or whose outcome it no longer keeps) prints "not found" and makes
// the exit code 3; --json shows it as null, in request order.

import type { Command } from "commander";
import { clientCommand, exitCodes, onRun } from "../client-command.ts";
import { itemStateBlock, itemStateToJson } from "../output.ts";

export function addGetCommand(program: Command): void {
  const command = clientCommand(program, "get <ids...>", "show items' states");
  onRun(command, async (session, args) => {
    const ids = args[0] as string[];
    const client = await session.cluster();
    const items = await client.get(session.ns, ids);
    const text = items.map((item, index) => (item === null ? `${ids[index]}  not found` : itemStateBlock(item))).join("\n\n");
    return {
      json: { items: items.map(itemStateToJson) },
      text,
      exitCode: items.includes(null) ? exitCodes.partial : exitCodes.ok,
    };
  });
}
