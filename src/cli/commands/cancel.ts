// `orq cancel ID...`: end items in any live state (outcome "cancelled").
// Ids the server does not know are listed and make the exit code 3.

import type { Command } from "commander";
import { clientCommand, exitCodes, onRun } from "../client-command.ts";

export function addCancelCommand(program: Command): void {
  const command = clientCommand(program, "cancel <ids...>", "cancel items (any live state)");
  onRun(command, async (session, args) => {
    const client = await session.cluster();
    const result = await client.cancel(session.ns, args[0] as string[]);
    return {
      json: result,
      text: [`cancelled ${result.cancelled}`, ...result.missing.map((id) => `missing ${id}`)].join("\n"),
      exitCode: result.missing.length > 0 ? exitCodes.partial : exitCodes.ok,
    };
  });
}
