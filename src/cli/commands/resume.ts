// `orq resume --topic T [--group G]`: lift a topic's pause (or one group's);
// its parked dequeues are served at once. Exits 0 either way; the output says
// whether it was paused.

import type { Command } from "commander";
import { clientCommand, onRun } from "../client-command.ts";

export function addResumeCommand(program: Command): void {
  const command = clientCommand(program, "resume", "lift the pause of a topic or one of its groups")
    .requiredOption("--topic <topic>", "the topic")
    .option("--group <group>", "lift only this group's pause");
  onRun(command, async (session, _args, options) => {
    const client = await session.client();
    const topic = options.topic as string;
    const group = options.group as string | undefined;
    const result = await client.resume(session.ns, topic, { group });
    const what = group === undefined ? topic : `${topic} group ${group}`;
    const json = { topic, ...(group === undefined ? {} : { group }), resumed: result.resumed };
    return { json, text: result.resumed ? `resumed ${what}` : `${what} was not paused` };
  });
}
