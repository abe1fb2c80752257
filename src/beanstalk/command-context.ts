// What a command handler gets (the front end's shared parts, its session, its
// arguments) and what it returns (an answer line, a line with a body, or the
// request to close), and the one mapping from engine failure kinds
// (engine/failures/failure-kind.ts) to beanstalkd's answers: whatever says "not now"
// (rate limited, storage or quota unavailable, a full server-wide table, and
// a failed commit) is OUT_OF_MEMORY, beanstalkd's "try again later", and so
// is over_limit (a put past the live-item or topic maximum: the server is
// full, as beanstalkd is when it cannot allocate a job); anything else cannot
// happen for a well-formed command on a single node and is INTERNAL_ERROR.

import type { EngineApi, FailureKind, ItemOpsApi, Reply, Result } from "../engine/api.ts";
import type { Clock } from "../lib/clock.ts";
import type { Limits } from "../limits.ts";
import { StorageUnavailableError } from "../storage/writer.ts";
import type { ArgCursor } from "./arg-cursor.ts";
import type { FrontEndState } from "./front-end-state.ts";
import type { Session } from "./session.ts";

export type BeanstalkEngine = EngineApi & ItemOpsApi;

/** Asks the connection to close after the answers before it are sent (quit). */
export const closeAnswer: unique symbol = Symbol("close");

export type Answer = string | { line: string; body: Uint8Array } | typeof closeAnswer;

export interface FrontEnd {
  readonly engine: BeanstalkEngine;
  /** The namespace whose topics are the tubes. */
  readonly ns: string;
  readonly limits: Limits;
  readonly clock: Clock;
  readonly state: FrontEndState;
  /** orq's version, shown as `version` in stats. */
  readonly version: string;
}

export interface CommandContext {
  readonly fe: FrontEnd;
  readonly session: Session;
  /** The whole command line, CRLF removed. */
  readonly line: string;
  /** Positioned after the command's name. */
  readonly args: ArgCursor;
  /** A put's body; null when it was not followed by CRLF; undefined for a line without a body. */
  readonly body: Uint8Array | null | undefined;
}

/**
 * An answer whose command has done its engine work (in order, synchronously)
 * and waits only for durability: the connection runs the next command at
 * once and sends this answer, in order, when `ready` settles. This is what
 * lets pipelined puts and deletes share one commit (one fsync) instead of
 * one each. A handler that must finish before the next command starts (a
 * waiting reserve) returns a plain Promise<Answer> instead.
 */
export class PendingAnswer {
  constructor(readonly ready: Promise<Answer>) {}
}

export type Handler = (ctx: CommandContext) => Answer | PendingAnswer | Promise<Answer>;

/** Thrown by a handler to answer with one word (an engine failure, say); the connection sends it. */
export class AnswerError extends Error {
  override name = "AnswerError";
  constructor(readonly answer: string) {
    super(answer);
  }
}

/** beanstalkd's answer to each kind of engine failure: a record over every kind, so a new kind without an answer does not type-check. */
export const answerOfKind: Readonly<Record<FailureKind, "OUT_OF_MEMORY" | "INTERNAL_ERROR">> = Object.freeze({
  invalid_value: "INTERNAL_ERROR",
  over_limit: "OUT_OF_MEMORY",
  unknown_dependency: "INTERNAL_ERROR",
  rate_limited: "OUT_OF_MEMORY",
  storage_unavailable: "OUT_OF_MEMORY",
  server_full: "OUT_OF_MEMORY",
  quota_unreachable: "OUT_OF_MEMORY",
  shard_elsewhere: "INTERNAL_ERROR",
  shard_unserved: "OUT_OF_MEMORY",
});

export function failureAnswer(kind: FailureKind): string {
  return answerOfKind[kind];
}

/** The engine's value once durable; a failure or a failed commit becomes an AnswerError. */
export async function settled<T>(result: Result<Reply<T>>): Promise<T> {
  if (!result.ok) throw new AnswerError(failureAnswer(result.failure.kind));
  const durable = result.value.durable;
  if (durable !== null) {
    try {
      await durable;
    } catch (error) {
      if (error instanceof StorageUnavailableError) throw new AnswerError(answerOfKind.storage_unavailable);
      throw error;
    }
  }
  return result.value.value;
}

/**
 * The engine's value now (a failure becomes an AnswerError at once) and the
 * answer `answerOf` builds from it, sent once the value is durable (a failed
 * commit answers OUT_OF_MEMORY).
 */
export function answerWhenDurable<T>(result: Result<Reply<T>>, answerOf: (value: T) => Answer): PendingAnswer {
  if (!result.ok) throw new AnswerError(failureAnswer(result.failure.kind));
  return answerOnceDurable(result.value.durable, answerOf(result.value.value));
}

/** `answer`, sent once `durable` settles (a failed commit answers OUT_OF_MEMORY). */
export function answerOnceDurable(durable: Promise<void> | null, answer: Answer): PendingAnswer {
  if (durable === null) return new PendingAnswer(Promise.resolve(answer));
  return new PendingAnswer(
    durable.then(
      () => answer,
      (error: unknown) => {
        if (error instanceof StorageUnavailableError) return answerOfKind.storage_unavailable;
        throw error;
      },
    ),
  );
}

/** `OK <bytes>` and a YAML body (stats and lists). */
export function okAnswer(body: Uint8Array): Answer {
  return { line: `OK ${body.length}`, body };
}
