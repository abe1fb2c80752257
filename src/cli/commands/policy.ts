// `orq policy --topic T [--group G] [--weight N] [--max-leased N] [--rate
// COUNT/PER] [--clear]`: set the policy of a topic (no --group), of one group,
// or of every group without its own (--group '*'), or clear it. Setting
// replaces the whole stored policy, so a bound not given is no bound; the
// command wants at least one bound or --clear, so that a forgotten flag never
// wipes a policy by accident. Any node of a cluster stores it for all.

import type { Command } from "commander";
import type { PolicyInput } from "../../client/types.ts";
import { clientCommand, intArg, onRun, rateArg, UsageError } from "../client-command.ts";
import { policyBoundsText, policyToJson } from "../output.ts";

/** The contract's largest weight. */
const weightMax = 10_000;

/** The request the flags ask for; bad combinations are usage errors. */
export function policyInput(options: Record<string, unknown>): PolicyInput {
  const input: PolicyInput = {
    group: options.group as string | undefined,
    weight: options.weight as number | undefined,
    maxLeased: options.maxLeased as number | undefined,
    rate: options.rate as PolicyInput["rate"],
  };
  const bounds = input.weight !== undefined || input.maxLeased !== undefined || input.rate !== undefined;
  if (options.clear === true) {
    if (bounds) throw new UsageError("--clear removes the policy: give it without --weight, --max-leased or --rate");
    return { group: input.group, clear: true };
  }
  if (!bounds) throw new UsageError("give --weight, --max-leased or --rate (the policy replaces the stored one), or --clear");
  if (input.weight !== undefined && input.group === undefined) throw new UsageError("--weight is a group's share: give it with --group");
  return input;
}

/** Whose policy, for people: "topic emails", "emails group acme", "emails, every group without its own". */
function scopeText(topic: string, group: string | undefined): string {
  if (group === undefined) return `topic ${topic}`;
  return group === "*" ? `${topic}, every group without its own` : `${topic} group ${group}`;
}

export function addPolicyCommand(program: Command): void {
  const command = clientCommand(program, "policy", "set (replace) or clear the policy of a topic, a group, or every group (--group '*')")
    .requiredOption("--topic <topic>", "the topic")
    .option("--group <group>", "a group's policy ('*': the default of every group without its own); without it, the topic's own")
    .option("--weight <n>", `the group's share of deliveries against other groups (1..${weightMax}; default 1)`, intArg(1, weightMax))
    .option("--max-leased <n>", "at most this many items leased at once", intArg(1, Number.MAX_SAFE_INTEGER))
    .option("--rate <count/per>", "at most COUNT deliveries per PER (ms, or with a unit: 10/1s, 600/1m, 5/1500)", rateArg)
    .option("--clear", "remove the policy");
  onRun(command, async (session, _args, options) => {
    const input = policyInput(options);
    const topic = options.topic as string;
    const client = await session.client();
    const result = await client.policy(session.ns, topic, input);
    const scope = scopeText(topic, input.group);
    if ("cleared" in result) {
      const json = { topic, ...(input.group === undefined ? {} : { group: input.group }), cleared: result.cleared };
      return { json, text: result.cleared ? `cleared the policy of ${scope}` : `${scope} had no policy` };
    }
    return { json: { topic, policy: policyToJson(result.policy) }, text: `policy of ${scope}: ${policyBoundsText(result.policy)}` };
  });
}
