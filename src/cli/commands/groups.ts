// `orq groups --topic T`: a topic's groups with their counts by state and
// whether each is paused, by name (the items without a group, "(none)",
// first), one page (--limit, --after) or, with --all, every page.
// `--sort backlog` puts the groups with the most items not yet delivered
// (ready, delayed, waiting) first; a sort over one page would mislead, so it
// fetches every page. On a cluster, every node's groups, summed per group.

import { type Command, Option } from "commander";
import type { GroupCounts } from "../../client/types.ts";
import { clientCommand, intArg, onRun } from "../client-command.ts";
import { groupToJson, groupsTable } from "../output.ts";

/** Pages fetched at most (1,000 pages of up to 1,000 groups): a bound on a runaway loop. */
const pagesMax = 1000;

/** Items of a group that wait for a delivery: ready, delayed and waiting (leased ones are being worked on, dead ones never will be). */
function backlogOf(g: GroupCounts): number {
  return g.ready + g.delayed + g.waiting;
}

/** Largest backlog first; equal backlogs keep their order (by name, as listed). */
export function byBacklog(groups: readonly GroupCounts[]): GroupCounts[] {
  return [...groups].sort((a, b) => backlogOf(b) - backlogOf(a));
}

export function addGroupsCommand(program: Command): void {
  const command = clientCommand(program, "groups", "list a topic's groups with their counts by state")
    .requiredOption("--topic <topic>", "the topic")
    .option("--limit <n>", "groups per page (server default 1000)", intArg(1, 1_000_000))
    .option("--after <group>", "start after this group (the previous page's next; \"\" is the items without a group)")
    .option("--all", "fetch every page")
    .addOption(new Option("--sort <order>", "name, or backlog: most ready + delayed + waiting first (fetches every page)").choices(["name", "backlog"]).default("name"));
  onRun(command, async (session, _args, options) => {
    const client = await session.cluster();
    const topic = options.topic as string;
    const sortByBacklog = options.sort === "backlog";
    const every = options.all === true || sortByBacklog;
    const groups: GroupCounts[] = [];
    let after = options.after as string | undefined;
    let next: string | null = null;
    for (let page = 0; page < pagesMax; page++) {
      const result = await client.groups(session.ns, topic, { limit: options.limit as number | undefined, after });
      groups.push(...result.groups);
      next = result.next;
      if (!every || next === null) break;
      after = next;
    }
    const shown = sortByBacklog ? byBacklog(groups) : groups;
    const more = next === null ? "" : `\nmore: --after ${JSON.stringify(next)}`;
    return {
      json: { groups: shown.map(groupToJson), next },
      text: shown.length === 0 ? more.trimStart() : groupsTable(shown) + more,
      note: shown.length === 0 ? `no groups in topic ${topic}` : undefined,
    };
  });
}
