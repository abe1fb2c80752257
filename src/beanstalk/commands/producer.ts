// put and use: what a producer sends. put's line is read twice: once by the
// parser's body plan (planPutBody: how many body bytes follow, or a body to
// skip with JOB_TOO_BIG), once by the handler. A put is answered INSERTED only
// after its item is durable.

import { ArgCursor } from "../arg-cursor.ts";
import { tubeArg } from "../command-args.ts";
import type { EnqueueItemInput } from "../../engine/api.ts";
import { type Answer, AnswerError, answerWhenDurable, type CommandContext, type FrontEnd, type PendingAnswer } from "../command-context.ts";
import type { Session } from "../session.ts";
import type { BodyPlan } from "../command-parser.ts";
import { delayMsOfSeconds, jobIdOf, leaseMsOfTtr, orqPriorityOf } from "../job-mapping.ts";

export const putPrefix = "put ";

/** max_attempts of a job put here (the wire's largest): a beanstalkd job is never given up by the server, only released on each timeout. */
const jobAttemptsMax = 2 ** 31 - 1;

interface PutArgs {
  priority: number;
  delaySeconds: number;
  ttrSeconds: number;
  bytes: number;
  /** Text after the byte count (beanstalkd refuses it, after the size check). */
  trailing: boolean;
}

function readPut(line: string): PutArgs | null {
  const args = new ArgCursor(line, putPrefix.length);
  const priority = args.u32();
  const delaySeconds = priority === null ? null : args.u32();
  const ttrSeconds = delaySeconds === null ? null : args.u32();
  const bytes = ttrSeconds === null ? null : args.u32();
  if (priority === null || delaySeconds === null || ttrSeconds === null || bytes === null) return null;
  return { priority, delaySeconds, ttrSeconds, bytes, trailing: !args.atEnd() };
}

/** What follows a put line: its body, a body to skip (JOB_TOO_BIG), or nothing (the handler answers BAD_FORMAT). */
export function planPutBody(line: string, jobBytesMax: number): BodyPlan {
  if (!line.startsWith(putPrefix) || line.includes("\0")) return null;
  const put = readPut(line);
  if (put === null) return null;
  if (put.bytes > jobBytesMax) return { skip: put.bytes + 2, reply: "JOB_TOO_BIG" };
  if (put.trailing) return null;
  return { read: put.bytes };
}

export function put(ctx: CommandContext): Answer | PendingAnswer {
  return putRun(ctx.fe, ctx.session, [{ line: ctx.line, body: ctx.body }])[0] as Answer | PendingAnswer;
}

/**
 * Consecutive puts read together (a pipelining producer): one engine enqueue
 * for the run, so they share one WriteSet and one commit, and each gets its
 * own answer in order. A put refused on its own (BAD_FORMAT, EXPECTED_CRLF,
 * DRAINING) is answered alone; an engine failure (OUT_OF_MEMORY) answers
 * every put of the run, as if each had been refused.
 */
export function putRun(
  fe: FrontEnd,
  session: Session,
  puts: ReadonlyArray<{ line: string; body: Uint8Array | null | undefined }>,
): Array<Answer | PendingAnswer> {
  const answers: Array<Answer | PendingAnswer | null> = [];
  const items: EnqueueItemInput[] = [];
  for (const { line, body } of puts) {
    const args = readPut(line);
    if (args === null) {
      answers.push("BAD_FORMAT");
      continue;
    }
    fe.state.countCommand("put");
    if (args.trailing || body === undefined) {
      answers.push("BAD_FORMAT");
      continue;
    }
    if (!session.producer) {
      session.producer = true;
      fe.state.producers++;
    }
    if (body === null) answers.push("EXPECTED_CRLF");
    else if (fe.state.draining) answers.push("DRAINING");
    else {
      answers.push(null);
      items.push(itemOf(fe, session.use, args, body));
    }
  }
  if (items.length === 0) return answers as Answer[];
  const result = fe.engine.enqueue(fe.ns, items, fe.clock.nowMs());
  const tube = fe.state.tube(session.use);
  let next = 0;
  const inserted = (ids: string[], at: number): Answer => {
    const orqId = ids[at];
    if (orqId === undefined) throw new AnswerError("INTERNAL_ERROR");
    fe.state.totalJobs++;
    tube.totalJobs++;
    return `INSERTED ${jobIdOf(orqId)}`;
  };
  return answers.map((answer) => {
    if (answer !== null) return answer;
    const at = next++;
    try {
      return answerWhenDurable(result, ({ ids }) => inserted(ids, at));
    } catch (error) {
      if (error instanceof AnswerError) return error.answer;
      throw error;
    }
  });
}

function itemOf(fe: FrontEnd, tube: string, args: PutArgs, body: Uint8Array): EnqueueItemInput {
  return {
    topic: tube,
    priority: orqPriorityOf(args.priority),
    payload: body,
    metadata: emptyBytes,
    deliverAtMs: null,
    delayMs: args.delaySeconds > 0 ? delayMsOfSeconds(args.delaySeconds, fe.limits.delayMsMax) : null,
    leaseMs: leaseMsOfTtr(args.ttrSeconds, fe.limits.leaseMsMax),
    ttlMs: null,
    delivery: "at_least_once",
    maxAttempts: jobAttemptsMax,
    requires: null,
    after: null,
    key: null,
  };
}

const emptyBytes = new Uint8Array(0);

export function use(ctx: CommandContext): Answer {
  const name = tubeArg(ctx);
  const { fe, session } = ctx;
  fe.state.countCommand("use");
  fe.state.tube(session.use).using--;
  session.use = name;
  fe.state.tube(name).using++;
  return `USING ${name}`;
}
