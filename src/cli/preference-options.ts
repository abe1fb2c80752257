// The item flags of soft matching and trace context (`orq enqueue`):
// --prefers (a JSON object, read as --requires is), --prefer-wait-ms and
// --trace. Kept apart from the other item flags so any command that makes an
// item adds the three with one call. The server checks them (weights
// 1..1000, the wait up to lease_ms_max, the trace up to traceBytesMax): the
// CLI only parses them.

import type { Command } from "commander";
import type { EnqueueItem } from "../client/types.ts";
import { intArg, jsonObjectArg } from "./client-command.ts";

const uintMax = Number.MAX_SAFE_INTEGER;

export function addPreferenceOptions(command: Command): Command {
  return command
    .option("--prefers <json>", 'soft requirements, each may carry a weight, e.g. \'{"zone": {"in": ["eu-1"], "weight": 5}, "ssd": true}\'', jsonObjectArg)
    .option("--prefer-wait-ms <n>", "once ready, only workers that fit every --prefers entry may take it for this long", intArg(0, uintMax))
    .option("--trace <string>", "trace context to carry to workers (a W3C traceparent, optionally a space and tracestate)");
}

/** The fields the flags of addPreferenceOptions give (undefined when not given). */
export function preferenceFromOptions(options: Record<string, unknown>): Pick<EnqueueItem, "prefers" | "preferWaitMs" | "trace"> {
  return {
    prefers: options.prefers as Record<string, unknown> | undefined,
    preferWaitMs: options.preferWaitMs as number | undefined,
    trace: options.trace as string | undefined,
  };
}
