// `orq topics`: the namespace's topics with their counts by state and whether
// each is paused, one page (--limit, --after) or, with --all, every page. On a
// cluster, summed over every node.

import type { Command } from "commander";
import type { TopicCounts } from "../../client/types.ts";
import { clientCommand, intArg, onRun } from "../client-command.ts";
import { topicsTable } from "../output.ts";

/** A topic entry in the wire's snake_case, like every --json output. */
function topicToJson(t: TopicCounts): Record<string, unknown> {
  const { pausedUntilMs, ...rest } = t;
  return pausedUntilMs === undefined ? rest : { ...rest, paused_until_ms: pausedUntilMs };
}

/** Pages fetched by --all at most (1,000 pages of up to 1,000 topics): a bound on a runaway loop. */
const pagesMax = 1000;

export function addTopicsCommand(program: Command): void {
  const command = clientCommand(program, "topics", "list topics with their counts by state")
    .option("--prefix <prefix>", "only topics starting with this")
    .option("--limit <n>", "topics per page (server default 1000)", intArg(1, 1_000_000))
    .option("--after <topic>", "start after this topic (the previous page's next)")
    .option("--all", "fetch every page");
  onRun(command, async (session, _args, options) => {
    // Through the cluster client: on a cluster node it sums every node's
    // counts per topic; on a single server it is the plain topics op.
    const client = await session.cluster();
    const topics: TopicCounts[] = [];
    let after = options.after as string | undefined;
    let next: string | null = null;
    for (let page = 0; page < pagesMax; page++) {
      const result = await client.topics(session.ns, { prefix: options.prefix as string | undefined, limit: options.limit as number | undefined, after });
      topics.push(...result.topics);
      next = result.next;
      if (options.all !== true || next === null) break;
      after = next;
    }
    const more = next === null ? "" : `\nmore: --after ${JSON.stringify(next)}`;
    return {
      json: { topics: topics.map(topicToJson), next },
      text: topics.length === 0 ? "" : topicsTable(topics) + more,
      note: topics.length === 0 ? `no topics in namespace ${session.ns}` : undefined,
    };
  });
}
