// Goal: the beanstalkd port's labels in the request metrics: every command in
// the table has its own op label behind "beanstalk:", a line naming none is
// "beanstalk:unknown", a put skipped as too big is a put; an answer's code is
// OK unless it is one of beanstalkd's negative answers, which is its own code;
// and the label sets handed to the metrics hold exactly these, so nothing is
// folded into the MessagePack port's "unknown" or "INTERNAL".

import { describe, expect, test } from "bun:test";
import { closeAnswer } from "../../src/beanstalk/command-context.ts";
import { commandTable, findCommand } from "../../src/beanstalk/command-table.ts";
import { beanstalkRequestLabels, negativeAnswers, requestCode, requestOp, unknownCommandOp } from "../../src/beanstalk/request-labels.ts";

describe("op labels", () => {
  test("one per command, named as beanstalkd names it", () => {
    const line = (text: string) => ({ kind: "line" as const, line: text });
    expect(requestOp(line("put 0 0 1 1"), findCommand("put 0 0 1 1"))).toBe("beanstalk:put");
    expect(requestOp(line("reserve-with-timeout 5"), findCommand("reserve-with-timeout 5"))).toBe("beanstalk:reserve-with-timeout");
    expect(requestOp(line("reserve"), findCommand("reserve"))).toBe("beanstalk:reserve");
    expect(requestOp(line("pause-tube t 1"), findCommand("pause-tube t 1"))).toBe("beanstalk:pause-tube");
    expect(requestOp(line("quit"), findCommand("quit"))).toBe("beanstalk:quit");
    expect(new Set(commandTable.map((spec) => requestOp(line(spec.prefix), spec))).size).toBe(commandTable.length);
  });

  test("a line naming no command is unknown; a put skipped as too big is a put", () => {
    expect(requestOp({ kind: "line", line: "bogus" }, null)).toBe(unknownCommandOp);
    expect(requestOp({ kind: "reply", reply: "BAD_FORMAT" }, null)).toBe(unknownCommandOp);
    expect(requestOp({ kind: "reply", reply: "JOB_TOO_BIG" }, null)).toBe("beanstalk:put");
  });
});

describe("code labels", () => {
  test("negative answers are their own code; every other answer is OK", () => {
    for (const answer of negativeAnswers) expect(requestCode(answer)).toBe(answer);
    for (const answer of ["INSERTED 5", "DELETED", "RELEASED", "BURIED", "TOUCHED", "KICKED 3", "USING t", "WATCHING 2", "PAUSED"]) {
      expect(requestCode(answer)).toBe("OK");
    }
    expect(requestCode({ line: "RESERVED 5 1", body: new Uint8Array([1]) })).toBe("OK");
    expect(requestCode(closeAnswer)).toBe("OK");
  });
});

describe("the label sets for the metrics", () => {
  test("every op label and every negative answer, nothing else", () => {
    expect(beanstalkRequestLabels.ops).toEqual([...commandTable.map((spec) => `beanstalk:${spec.name}`), unknownCommandOp]);
    expect(beanstalkRequestLabels.codes).toEqual(negativeAnswers);
  });
});
