// `orq resume --topic T`: lift a topic's pause; its parked dequeues are served
// at once. Exits 0 either way; the output says whether it was paused.

import type { Command } from "commander";
import { clientCommand, onRun } from "../client-command.ts";

export function addResumeCommand(program: Command): void {
  const command = clientCommand(program, "resume", "lift a topic's pause").requiredOption("--topic <topic>", "the topic");
  onRun(command, async (session, _args, options) => {
    const client = await session.client();
    const topic = options.topic as string;
    const result = await client.resume(session.ns, topic);
    return { json: { topic, resumed: result.resumed }, text: result.resumed ? `resumed ${topic}` : `${topic} was not paused` };
  });
}
