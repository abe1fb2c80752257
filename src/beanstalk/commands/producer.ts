// put and use: what a producer sends. put's line is read twice: once by the
// parser's body plan (planPutBody: how many body bytes follow, or a body to
// skip with JOB_TOO_BIG), once by the handler. A put is answered INSERTED only
// after its item is durable.

import { ArgCursor } from "../arg-cursor.ts";
import { badFormat, tubeArg } from "../command-args.ts";
import { type Answer, AnswerError, answerWhenDurable, type CommandContext, type PendingAnswer } from "../command-context.ts";
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
  const args = readPut(ctx.line);
  if (args === null) throw badFormat();
  const { fe, session } = ctx;
  fe.state.countCommand("put");
  if (args.trailing || ctx.body === undefined) throw badFormat();
  if (!session.producer) {
    session.producer = true;
    fe.state.producers++;
  }
  if (ctx.body === null) return "EXPECTED_CRLF";
  if (fe.state.draining) return "DRAINING";
  const nowMs = fe.clock.nowMs();
  const result = fe.engine.enqueue(
    fe.ns,
    [
      {
        topic: session.use,
        priority: orqPriorityOf(args.priority),
        payload: ctx.body,
        metadata: new Uint8Array(0),
        deliverAtMs: null,
        delayMs: args.delaySeconds > 0 ? delayMsOfSeconds(args.delaySeconds, fe.limits.delayMsMax) : null,
        leaseMs: leaseMsOfTtr(args.ttrSeconds, fe.limits.leaseMsMax),
        ttlMs: null,
        delivery: "at_least_once",
        maxAttempts: jobAttemptsMax,
        requires: null,
        after: null,
        key: null,
      },
    ],
    nowMs,
  );
  const tube = fe.state.tube(session.use);
  return answerWhenDurable(result, ({ ids }) => {
    const orqId = ids[0];
    if (orqId === undefined) throw new AnswerError("INTERNAL_ERROR");
    fe.state.totalJobs++;
    tube.totalJobs++;
    return `INSERTED ${jobIdOf(orqId)}`;
  });
}

export function use(ctx: CommandContext): Answer {
  const name = tubeArg(ctx);
  const { fe, session } = ctx;
  fe.state.countCommand("use");
  fe.state.tube(session.use).using--;
  session.use = name;
  fe.state.tube(name).using++;
  return `USING ${name}`;
}
