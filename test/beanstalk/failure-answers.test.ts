// Goal: the beanstalkd port answers every kind of engine failure
// (engine/failures/failure-kind.ts) through its one mapping (command-context.ts): the
// "not now" kinds and over_limit are OUT_OF_MEMORY, beanstalkd's "try again
// later", the rest INTERNAL_ERROR, exactly as it answered the wire codes
// before kinds existed; a kind added without an answer here fails this test
// (and answerOfKind, a total record, fails the type check). A failed commit
// answers as storage_unavailable does; any other rejection is not swallowed.

import { describe, expect, test } from "bun:test";
import { AnswerError, answerOfKind, answerOnceDurable, failureAnswer, settled } from "../../src/beanstalk/command-context.ts";
import type { Reply, Result } from "../../src/engine/api.ts";
import { failureKinds } from "../../src/engine/failures/failure-kind.ts";
import { StorageUnavailableError } from "../../src/storage/writer.ts";

/** "Try again later": what says "not now", and a put past a maximum (the server is full). */
const outOfMemory = ["over_limit", "rate_limited", "storage_unavailable", "server_full", "quota_unreachable", "shard_unserved"];
/** What a well-formed command cannot meet on a single node. */
const internalError = ["invalid_value", "unknown_dependency", "shard_elsewhere"];
const expectedAnswer: Record<string, string> = Object.fromEntries([
  ...outOfMemory.map((kind) => [kind, "OUT_OF_MEMORY"]),
  ...internalError.map((kind) => [kind, "INTERNAL_ERROR"]),
]);

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => "resolved",
    (error: unknown) => error,
  );
}

describe("failureAnswer", () => {
  for (const kind of failureKinds) {
    test(`${kind} is ${expectedAnswer[kind] ?? "(no answer in this test)"}`, async () => {
      expect(Object.keys(expectedAnswer)).toContain(kind);
      expect(failureAnswer(kind)).toBe(expectedAnswer[kind] as string);
      // The path a command takes: an engine failure becomes an AnswerError carrying the answer.
      const failed: Result<Reply<number>> = { ok: false, failure: { kind, message: "m" } };
      const thrown = await rejection(settled(failed));
      expect(thrown).toBeInstanceOf(AnswerError);
      expect((thrown as AnswerError).answer).toBe(expectedAnswer[kind] as string);
    });
  }

  test("maps exactly the engine's kinds, none more", () => {
    expect(Object.keys(answerOfKind).sort()).toEqual([...failureKinds].sort());
    expect(Object.keys(expectedAnswer).sort()).toEqual([...failureKinds].sort());
  });
});

describe("a failed commit", () => {
  const storageDown = new StorageUnavailableError("disk full", 0, 1000);

  test("settled: OUT_OF_MEMORY, as storage_unavailable", async () => {
    const result: Result<Reply<number>> = { ok: true, value: { value: 1, durable: Promise.reject(storageDown) } };
    const thrown = await rejection(settled(result));
    expect((thrown as AnswerError).answer).toBe("OUT_OF_MEMORY");
  });

  test("answerOnceDurable: OUT_OF_MEMORY in place of the answer", async () => {
    expect(await answerOnceDurable(Promise.reject(storageDown), "INSERTED 1").ready).toBe("OUT_OF_MEMORY");
    expect(await answerOnceDurable(Promise.resolve(), "INSERTED 1").ready).toBe("INSERTED 1");
  });

  test("any other rejection is not turned into an answer", async () => {
    const bug = new Error("bug");
    expect(await rejection(answerOnceDurable(Promise.reject(bug), "INSERTED 1").ready)).toBe(bug);
    const result: Result<Reply<number>> = { ok: true, value: { value: 1, durable: Promise.reject(bug) } };
    expect(await rejection(settled(result))).toBe(bug);
  });
});
