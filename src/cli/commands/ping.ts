// `orq ping`: is the server there, which one, and how far away.

import type { Command } from "commander";
import { clientCommand, onRun } from "../client-command.ts";
import { isoTime } from "../output.ts";

export function addPingCommand(program: Command): void {
  const command = clientCommand(program, "ping", "check the server answers; print its version and the round trip");
  onRun(command, async (session, _args, options) => {
    // ping needs no token (the contract), so a refused hello does not stop it; only the hello tells the version.
    const client = await session.client({ helloRequired: false });
    const startMs = performance.now();
    const { nowMs } = await client.ping();
    const roundTripMs = Math.round((performance.now() - startMs) * 1000) / 1000;
    const hello = client.server;
    if (hello === null) {
      return {
        json: { server: options.server, auth: "token required", now_ms: nowMs, round_trip_ms: roundTripMs },
        text:
          `pong from orq at ${options.server as string}: ${roundTripMs} ms, server time ${isoTime(nowMs)}\n` +
          "(the server requires a token for everything but ping: set ORQ_TOKEN, or pass --token)",
      };
    }
    return {
      json: { server: options.server, version: hello.version, node_id: hello.nodeId, shards: hello.shards, now_ms: nowMs, round_trip_ms: roundTripMs },
      text: `pong from orq ${hello.version} at ${options.server as string} (node ${hello.nodeId}, ${hello.shards} shards): ${roundTripMs} ms, server time ${isoTime(nowMs)}`,
    };
  });
}
