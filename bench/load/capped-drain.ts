// The capped-drain scenario (orq only: beanstalkd has no groups): the drain
// scenario's backlog spread over 1,000 groups, with a "*" policy of
// max_leased 8 set through the `policy` op before the load, then drained as
// the drain scenario drains (take 100 + ack, 2 connections x 16 in flight).
// Beside it, in the same run and the same steps, a plain drain: the same
// number of items without groups or policy. Each on a fresh server, so
// neither drain inherits the other's heap.

import { OrqConn } from "./orq-conn.ts";
import type { Child } from "./processes.ts";
import { readCpuS } from "./processes.ts";
import { runDrain, runEnqueue, type ThroughputFigures } from "./runners.ts";
import { NAMESPACE, TOPIC, groupNames, plainProducers, type ProducerShape, type System } from "./systems.ts";

/** Groups the capped backlog is spread over, and the "*" policy's max_leased. */
export const CAPPED_GROUPS = 1000;
export const CAPPED_MAX_LEASED = 8;
const CAPPED_GROUP_PREFIX = "customer";
/** The backlog's load: the drain scenario's (batches of 100, 8 connections). */
const LOAD_SHAPE = { batch: 100, connections: 8 } as const;

export interface DrainPassFigures {
  /** The backlog's load, then its drain, with the server's CPU seconds over each. */
  load: ThroughputFigures;
  drain: ThroughputFigures;
}

export interface CappedDrainFigures {
  groups: number;
  maxLeased: number;
  /** The "*" policy as the server stored it (the `policy` op's reply). */
  policy: Record<string, unknown>;
  plain: DrainPassFigures;
  capped: DrainPassFigures;
}

export interface CappedDrainSteps {
  /** A fresh server. */
  start(): Promise<Child>;
  /** The server under load, its items naming the shape's groups in turn. */
  system(child: Child, shape: ProducerShape): System;
}

export interface CappedDrainOptions {
  items: number;
  depth: number;
  drainConnections: number;
  drainDepth: number;
}

/** Sets the topic's "*" policy (every group without one of its own) to max_leased `maxLeased`; resolves with the stored policy. */
export async function setDefaultGroupPolicy(host: string, port: number, maxLeased: number): Promise<Record<string, unknown>> {
  const conn = await OrqConn.connect(host, port);
  try {
    const reply = await conn.call({ op: "policy", ns: NAMESPACE, topic: TOPIC, group: "*", max_leased: maxLeased });
    return reply.policy as Record<string, unknown>;
  } finally {
    conn.close();
  }
}

/**
 * One pass: a fresh server, `policy` first when given, the backlog loaded
 * over the shape's groups, then drained. Both passes draw priorities from
 * the same streams, so their backlogs differ only in the groups.
 */
async function drainPass(steps: CappedDrainSteps, options: CappedDrainOptions, shape: ProducerShape, policy: ((child: Child) => Promise<unknown>) | null): Promise<DrainPassFigures> {
  const child = await steps.start();
  try {
    if (policy !== null) await policy(child);
    const loadCpuS = readCpuS(child.pid);
    const load = await runEnqueue(steps.system(child, shape), { items: options.items, ...LOAD_SHAPE, depth: options.depth });
    load.serverCpuS = readCpuS(child.pid) - loadCpuS;
    const drainCpuS = readCpuS(child.pid);
    const drain = await runDrain(steps.system(child, plainProducers), { items: options.items, count: 100, connections: options.drainConnections, depth: options.drainDepth });
    drain.serverCpuS = readCpuS(child.pid) - drainCpuS;
    return { load, drain };
  } finally {
    await child.stop();
  }
}

export async function runCappedDrain(steps: CappedDrainSteps, options: CappedDrainOptions): Promise<CappedDrainFigures> {
  const plain = await drainPass(steps, options, plainProducers, null);
  let stored: Record<string, unknown> = {};
  const capped = await drainPass(steps, options, { groups: groupNames(CAPPED_GROUP_PREFIX, CAPPED_GROUPS), firstStream: 0 }, async (child) => {
    stored = await setDefaultGroupPolicy(child.host, child.port, CAPPED_MAX_LEASED);
  });
  return { groups: CAPPED_GROUPS, maxLeased: CAPPED_MAX_LEASED, policy: stored, plain, capped };
}
