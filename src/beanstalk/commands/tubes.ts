// watch, ignore, list-tubes, list-tube-used, list-tubes-watched and
// pause-tube: the tubes a connection uses and watches, and which exist. A
// tube exists while a connection uses or watches it, while its topic exists
// in the namespace (it holds items, or is paused), and `default` always does.
// Topics whose names are not valid tube names (made over MessagePack) are not
// listed.

import { noArgs, tubeArg } from "../command-args.ts";
import { type Answer, type CommandContext, type FrontEnd, okAnswer } from "../command-context.ts";
import { isValidTubeName } from "../tube-names.ts";
import { yamlList } from "../yaml.ts";

export const defaultTube = "default";

export function watch(ctx: CommandContext): Answer {
  const name = tubeArg(ctx);
  const { fe, session } = ctx;
  fe.state.countCommand("watch");
  if (!session.watch.includes(name)) {
    session.watch.push(name);
    fe.state.tube(name).watching++;
  }
  return `WATCHING ${session.watch.length}`;
}

export function ignore(ctx: CommandContext): Answer {
  const name = tubeArg(ctx);
  const { fe, session } = ctx;
  fe.state.countCommand("ignore");
  const at = session.watch.indexOf(name);
  if (at >= 0 && session.watch.length < 2) return "NOT_IGNORED";
  if (at >= 0) {
    session.watch.splice(at, 1);
    fe.state.tube(name).watching--;
  }
  return `WATCHING ${session.watch.length}`;
}

export function listTubes(ctx: CommandContext): Answer {
  noArgs(ctx, "list-tubes");
  ctx.fe.state.countCommand("list-tubes");
  return okAnswer(yamlList(existingTubes(ctx.fe)));
}

export function listTubeUsed(ctx: CommandContext): Answer {
  noArgs(ctx, "list-tube-used");
  ctx.fe.state.countCommand("list-tube-used");
  return `USING ${ctx.session.use}`;
}

export function listTubesWatched(ctx: CommandContext): Answer {
  noArgs(ctx, "list-tubes-watched");
  ctx.fe.state.countCommand("list-tubes-watched");
  return okAnswer(yamlList(ctx.session.watch));
}

/** Every existing tube: `default`, the referenced ones, and the namespace's topics with valid names; byte order. */
export function existingTubes(fe: FrontEnd): string[] {
  const names = new Set<string>([defaultTube, ...fe.state.referencedTubes()]);
  let after: string | null = null;
  for (;;) {
    const page = fe.engine.topics(fe.ns, { prefix: null, limit: fe.limits.topicsPageMax, after });
    for (const topic of page.topics) if (isValidTubeName(topic.topic, fe.limits.beanstalkTubeBytesMax)) names.add(topic.topic);
    if (page.next === null) break;
    after = page.next;
  }
  return [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

export function tubeExists(fe: FrontEnd, name: string): boolean {
  if (name === defaultTube) return true;
  const tube = fe.state.knownTube(name);
  if (tube !== undefined && (tube.using > 0 || tube.watching > 0)) return true;
  return fe.engine.topics(fe.ns, { prefix: name, limit: 1, after: null }).topics[0]?.topic === name;
}
