// stats, stats-job and stats-tube: beanstalkd's YAML with beanstalkd's keys,
// in its order. Counts come from the engine's topics (every item of the
// namespace, whoever put it); command counters, connection counts and the
// per-job release/bury/kick/timeout counters are this port's, since this
// process started. docs/BEANSTALKD.md lists what each key means here.

import { hostname, release as osRelease, machine } from "node:os";
import type { TopicCounts } from "../../engine/api.ts";
import { jobIdArg, noArgs, tubeArg } from "../command-args.ts";
import { type Answer, type CommandContext, type FrontEnd, okAnswer } from "../command-context.ts";
import { beanstalkPriorityOf, jobIdOf, orqPriorityOf, urgentPriorityBelow } from "../job-mapping.ts";
import { quoted, secondsMicros, yamlMap, type YamlValue } from "../yaml.ts";
import { existingTubes, tubeExists } from "./tubes.ts";

/** stats' cmd-* keys in beanstalkd's order, each the command it counts. */
const countedCommands = [
  "put", "peek", "peek-ready", "peek-delayed", "peek-buried", "reserve", "reserve-with-timeout", "delete", "release",
  "use", "watch", "ignore", "bury", "kick", "touch", "stats", "stats-job", "stats-tube", "list-tubes", "list-tube-used",
  "list-tubes-watched", "pause-tube",
] as const;

const beanstalkState = { ready: "ready", delayed: "delayed", waiting: "delayed", leased: "reserved", dead: "buried" } as const;

const uint32Max = 2 ** 32 - 1;

function seconds(ms: number): number {
  return Math.trunc(ms / 1000);
}

export function stats(ctx: CommandContext): Answer {
  noArgs(ctx, "stats");
  const { fe } = ctx;
  fe.state.countCommand("stats");
  const totals = { ready: 0, delayed: 0, waiting: 0, leased: 0, dead: 0 };
  for (const topic of allTopics(fe)) {
    totals.ready += topic.ready;
    totals.delayed += topic.delayed;
    totals.waiting += topic.waiting;
    totals.leased += topic.leased;
    totals.dead += topic.dead;
  }
  const s = fe.state;
  const cpu = process.cpuUsage();
  const entries: Array<[string, YamlValue]> = [
    ["current-jobs-urgent", fe.engine.countReadyBelow(fe.ns, null, orqPriorityOf(urgentPriorityBelow))],
    ["current-jobs-ready", totals.ready],
    ["current-jobs-reserved", totals.leased],
    ["current-jobs-delayed", totals.delayed + totals.waiting],
    ["current-jobs-buried", totals.dead],
  ];
  for (const name of countedCommands) entries.push([`cmd-${name}`, s.commands.get(name) ?? 0]);
  entries.push(
    ["job-timeouts", s.jobTimeouts],
    ["total-jobs", s.totalJobs],
    ["max-job-size", fe.limits.beanstalkJobBytesMax],
    ["current-tubes", existingTubes(fe).length],
    ["current-connections", s.connections],
    ["current-producers", s.producers],
    ["current-workers", s.workers],
    ["current-waiting", s.waiting],
    ["total-connections", s.totalConnections],
    ["pid", process.pid],
    ["version", quoted(fe.version)],
    ["rusage-utime", secondsMicros(cpu.user)],
    ["rusage-stime", secondsMicros(cpu.system)],
    ["uptime", seconds(fe.clock.nowMs() - s.startedAtMs)],
    // orq has no binlog: its LMDB commits are durable (docs/STORAGE.md).
    ["binlog-oldest-index", 0],
    ["binlog-current-index", 0],
    ["binlog-records-migrated", 0],
    ["binlog-records-written", 0],
    ["binlog-max-size", 0],
    ["draining", s.draining ? "true" : "false"],
    ["id", s.instanceId],
    ["hostname", hostname()],
    ["os", osRelease()],
    ["platform", machine()],
  );
  return okAnswer(yamlMap(entries));
}

export function statsJob(ctx: CommandContext): Answer {
  const { orqId } = jobIdArg(ctx);
  const { fe } = ctx;
  fe.state.countCommand("stats-job");
  if (orqId === null) return "NOT_FOUND";
  const nowMs = fe.clock.nowMs();
  const item = fe.engine.inspect(fe.ns, orqId, nowMs);
  if (item === null) return "NOT_FOUND";
  const counters = fe.state.knownJob(orqId);
  const state = beanstalkState[item.state];
  const untilMs = item.state === "leased" ? (item.leaseExpiresAtMs ?? nowMs) : item.state === "delayed" ? item.deliverAtMs : nowMs;
  const delaySeconds = counters?.delaySeconds ?? seconds(Math.max(0, item.deliverAtMs - item.enqueuedAtMs));
  return okAnswer(
    yamlMap([
      ["id", jobIdOf(orqId)],
      ["tube", item.topic],
      ["state", state],
      ["pri", beanstalkPriorityOf(item.priority)],
      ["age", seconds(nowMs - item.enqueuedAtMs)],
      ["delay", delaySeconds],
      ["ttr", seconds(item.leaseMs)],
      ["time-left", Math.max(0, seconds(untilMs - nowMs))],
      ["file", 0],
      ["reserves", item.deliveries],
      ["timeouts", counters?.timeouts ?? 0],
      ["releases", counters?.releases ?? 0],
      ["buries", counters?.buries ?? 0],
      ["kicks", counters?.kicks ?? 0],
    ]),
  );
}

export function statsTube(ctx: CommandContext): Answer {
  const name = tubeArg(ctx);
  const { fe } = ctx;
  fe.state.countCommand("stats-tube");
  if (!tubeExists(fe, name)) return "NOT_FOUND";
  const counts = fe.engine.topics(fe.ns, { prefix: name, limit: 1, after: null }).topics.find((t) => t.topic === name);
  const tube = fe.state.tube(name);
  const nowMs = fe.clock.nowMs();
  return okAnswer(
    yamlMap([
      ["name", name],
      ["current-jobs-urgent", fe.engine.countReadyBelow(fe.ns, name, orqPriorityOf(urgentPriorityBelow))],
      ["current-jobs-ready", counts?.ready ?? 0],
      ["current-jobs-reserved", counts?.leased ?? 0],
      ["current-jobs-delayed", (counts?.delayed ?? 0) + (counts?.waiting ?? 0)],
      ["current-jobs-buried", counts?.dead ?? 0],
      ["total-jobs", tube.totalJobs],
      ["current-using", tube.using],
      ["current-watching", tube.watching],
      ["current-waiting", tube.waiting],
      ["cmd-delete", tube.cmdDelete],
      ["cmd-pause-tube", tube.cmdPauseTube],
      // A pause made over MessagePack without an end shows the largest delay beanstalkd takes.
      ["pause", counts?.paused === true ? (counts.pausedUntilMs === undefined ? uint32Max : tube.pauseSeconds) : 0],
      ["pause-time-left", counts?.paused === true ? (counts.pausedUntilMs === undefined ? uint32Max : Math.max(0, seconds(counts.pausedUntilMs - nowMs))) : 0],
    ]),
  );
}

function allTopics(fe: FrontEnd): TopicCounts[] {
  const out: TopicCounts[] = [];
  let after: string | null = null;
  for (;;) {
    const page = fe.engine.topics(fe.ns, { prefix: null, limit: fe.limits.topicsPageMax, after });
    out.push(...page.topics);
    if (page.next === null) return out;
    after = page.next;
  }
}
