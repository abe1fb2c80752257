// `orq policies --topic T`: a topic's policies, its own first (GROUP
// "(topic)"), then by group name ("* (default)" before the names), one page
// (--limit, --after) or, with --all, every page. Every node of a cluster holds
// them all, so one node answers.

import type { Command } from "commander";
import type { Policy } from "../../client/types.ts";
import { clientCommand, intArg, onRun } from "../client-command.ts";
import { policiesTable, policyToJson } from "../output.ts";

/** Pages fetched by --all at most (1,000 pages of up to 1,000 policies): a bound on a runaway loop. */
const pagesMax = 1000;

export function addPoliciesCommand(program: Command): void {
  const command = clientCommand(program, "policies", "list a topic's policies (its own, then by group)")
    .requiredOption("--topic <topic>", "the topic")
    .option("--limit <n>", "policies per page (server default 1000)", intArg(1, 1_000_000))
    .option("--after <group>", "start after this group (the previous page's next; \"\" is the topic's own)")
    .option("--all", "fetch every page");
  onRun(command, async (session, _args, options) => {
    const client = await session.client();
    const topic = options.topic as string;
    const policies: Policy[] = [];
    let after = options.after as string | undefined;
    let next: string | null = null;
    for (let page = 0; page < pagesMax; page++) {
      const result = await client.policies(session.ns, topic, { limit: options.limit as number | undefined, after });
      policies.push(...result.policies);
      next = result.next;
      if (options.all !== true || next === null) break;
      after = next;
    }
    const more = next === null ? "" : `\nmore: --after ${JSON.stringify(next)}`;
    return {
      json: { policies: policies.map(policyToJson), next },
      text: policies.length === 0 ? more.trimStart() : policiesTable(policies) + more,
      note: policies.length === 0 ? `no policies for topic ${topic}` : undefined,
    };
  });
}
