// The op table: every op of protocol v1, as data. The dispatcher looks ops up
// here and applies each entry's flags before calling its handler. It holds
// exactly the contract's op names (protocol/op-names.ts): a missing handler is
// a type error, and so is a name the contract lacks.

import { isOpName } from "../protocol/op-names.ts";
import type { OpTable } from "./op-types.ts";
import { ackOp } from "./ops/ack.ts";
import { cancelOp } from "./ops/cancel.ts";
import { clusterOp } from "./ops/cluster.ts";
import { deadOp } from "./ops/dead.ts";
import { dequeueOp } from "./ops/dequeue.ts";
import { enqueueOp } from "./ops/enqueue.ts";
import { extendOp } from "./ops/extend.ts";
import { getOp } from "./ops/get.ts";
import { helloOp } from "./ops/hello.ts";
import { listOp } from "./ops/list.ts";
import { nackOp } from "./ops/nack.ts";
import { pauseOp } from "./ops/pause.ts";
import { pingOp } from "./ops/ping.ts";
import { redriveOp } from "./ops/redrive.ts";
import { resumeOp } from "./ops/resume.ts";
import { statsOp } from "./ops/stats.ts";
import { topicsOp } from "./ops/topics.ts";
import { policyOp } from "./ops/policy.ts";
import { policiesOp } from "./ops/policies.ts";
import { groupsOp } from "./ops/groups.ts";
import { explainOp } from "./ops/explain.ts";
import { waitOp } from "./ops/wait.ts";

export const opTable: OpTable = Object.freeze({
  hello: helloOp,
  ping: pingOp,
  enqueue: enqueueOp,
  dequeue: dequeueOp,
  ack: ackOp,
  nack: nackOp,
  extend: extendOp,
  cancel: cancelOp,
  get: getOp,
  topics: topicsOp,
  dead: deadOp,
  redrive: redriveOp,
  stats: statsOp,
  list: listOp,
  pause: pauseOp,
  resume: resumeOp,
  cluster: clusterOp,
  policy: policyOp,
  policies: policiesOp,
  groups: groupsOp,
  explain: explainOp,
  wait: waitOp,
});

export function lookupOp(name: string): OpTable[keyof OpTable] | undefined {
  return isOpName(name) ? opTable[name] : undefined;
}
