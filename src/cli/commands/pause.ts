// `orq pause --topic T [--for-ms N]`: stop deliveries from a topic, for a
// while or until `orq resume`. Enqueues, acks and expiries go on. A pause
// survives a server restart; pausing a paused topic replaces its end.

import type { Command } from "commander";
import { clientCommand, intArg, onRun } from "../client-command.ts";
import { isoTime } from "../output.ts";

export function addPauseCommand(program: Command): void {
  const command = clientCommand(program, "pause", "stop deliveries from a topic (until resume, or for --for-ms)")
    .requiredOption("--topic <topic>", "the topic")
    .option("--for-ms <n>", "end the pause by itself after this long (the server allows up to a year)", intArg(1, Number.MAX_SAFE_INTEGER));
  onRun(command, async (session, _args, options) => {
    const client = await session.client();
    const topic = options.topic as string;
    const result = await client.pause(session.ns, topic, { forMs: options.forMs as number | undefined });
    const until = result.pausedUntilMs === null ? "until resumed" : `until ${isoTime(result.pausedUntilMs)}`;
    return { json: { topic, paused_until_ms: result.pausedUntilMs }, text: `paused ${topic} ${until}` };
  });
}
