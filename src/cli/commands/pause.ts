// `orq pause --topic T [--group G] [--for-ms N]`: stop deliveries from a
// topic (or, with --group, from that group's items only), for a while or
// until `orq resume`. Enqueues, acks and expiries go on. A pause survives a
// server restart; pausing a paused topic or group replaces its end.

import type { Command } from "commander";
import { clientCommand, intArg, onRun } from "../client-command.ts";
import { isoTime } from "../output.ts";

export function addPauseCommand(program: Command): void {
  const command = clientCommand(program, "pause", "stop deliveries from a topic or one of its groups (until resume, or for --for-ms)")
    .requiredOption("--topic <topic>", "the topic")
    .option("--group <group>", "pause only this group's items")
    .option("--for-ms <n>", "end the pause by itself after this long (the server allows up to a year)", intArg(1, Number.MAX_SAFE_INTEGER));
  onRun(command, async (session, _args, options) => {
    const client = await session.client();
    const topic = options.topic as string;
    const group = options.group as string | undefined;
    const result = await client.pause(session.ns, topic, { forMs: options.forMs as number | undefined, group });
    const until = result.pausedUntilMs === null ? "until resumed" : `until ${isoTime(result.pausedUntilMs)}`;
    const what = group === undefined ? topic : `${topic} group ${group}`;
    const json = { topic, ...(group === undefined ? {} : { group }), paused_until_ms: result.pausedUntilMs };
    return { json, text: `paused ${what} ${until}` };
  });
}
