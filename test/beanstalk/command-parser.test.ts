// Goal: the beanstalkd byte parser turns the same input into the same
// commands however the bytes are split (every split offset, and one byte at
// a time), reads put bodies with their CRLF, answers EXPECTED_CRLF, skips a
// refused body (JOB_TOO_BIG), and discards an overlong line (BAD_FORMAT) at
// the limit and limit + 1, like beanstalkd's conn_process_io.

import { describe, expect, test } from "bun:test";
import { CommandParser, type BodyPlan, type ParsedInput } from "../../src/beanstalk/command-parser.ts";
import { planPutBody } from "../../src/beanstalk/commands/producer.ts";

const lineBytesMax = 224;
const jobBytesMax = 16;

function render(input: ParsedInput): string {
  if (input.kind === "line") return `line:${input.line}`;
  if (input.kind === "reply") return `reply:${input.reply}`;
  return `body:${input.line}:${input.body === null ? "<no crlf>" : Buffer.from(input.body).toString("latin1")}`;
}

function parseChunks(chunks: Uint8Array[]): string[] {
  const out: string[] = [];
  const parser = new CommandParser(lineBytesMax, {
    planBody: (line: string): BodyPlan => planPutBody(line, jobBytesMax),
    input: (parsed) => out.push(render(parsed)),
  });
  for (const chunk of chunks) parser.push(chunk);
  return out;
}

const stream = Buffer.from(
  [
    "use tube-1\r\n",
    "put 1 0 10 5\r\nhe\r\no\r\n",
    "put 1 0 10 0\r\n\r\n",
    "put 1 0 10 3\r\nabcXY",
    "reserve\r\n",
    `put 1 0 10 ${jobBytesMax + 1}\r\n${"z".repeat(jobBytesMax + 1)}\r\n`,
    "put 1 0 10 3 trailing\r\n",
    `${"u".repeat(lineBytesMax + 5)}\r\n`,
    "stats\r\n",
  ].join(""),
  "latin1",
);

const expected = [
  "line:use tube-1",
  "body:put 1 0 10 5:he\r\no",
  "body:put 1 0 10 0:",
  "body:put 1 0 10 3:<no crlf>",
  "line:reserve",
  "reply:JOB_TOO_BIG",
  "line:put 1 0 10 3 trailing",
  "reply:BAD_FORMAT",
  "line:stats",
];

describe("CommandParser", () => {
  test("the whole stream at once", () => {
    expect(parseChunks([stream])).toEqual(expected);
  });

  test("split at every offset", () => {
    for (let at = 0; at <= stream.length; at++) {
      expect(parseChunks([stream.subarray(0, at), stream.subarray(at)])).toEqual(expected);
    }
  });

  test("one byte at a time", () => {
    const bytes: Uint8Array[] = [];
    for (let i = 0; i < stream.length; i++) bytes.push(stream.subarray(i, i + 1));
    expect(parseChunks(bytes)).toEqual(expected);
  });

  test("a line of lineBytesMax bytes with its CRLF is read; one byte more is BAD_FORMAT", () => {
    const atLimit = `${"a".repeat(lineBytesMax - 2)}\r\n`;
    const overLimit = `${"a".repeat(lineBytesMax - 1)}\r\n`;
    expect(parseChunks([Buffer.from(atLimit)])).toEqual([`line:${"a".repeat(lineBytesMax - 2)}`]);
    // The CR past the limit went with the discarded bytes, so the discard runs to the next CRLF (beanstalkd's too).
    expect(parseChunks([Buffer.from(`${overLimit}stats\r\nuse x\r\n`)])).toEqual(["reply:BAD_FORMAT", "line:use x"]);
  });

  test("a CR not followed by LF hides a later CRLF, as in beanstalkd's scan_line_end", () => {
    expect(parseChunks([Buffer.from("ab\rc\r\n")])).toEqual([]);
    expect(parseChunks([Buffer.from(`ab\rc\r\n${"x".repeat(lineBytesMax)}\r\nstats\r\n`)])).toEqual(["reply:BAD_FORMAT", "line:stats"]);
  });

  test("bodies at the size limit and past it", () => {
    const atLimit = `put 0 0 1 ${jobBytesMax}\r\n${"b".repeat(jobBytesMax)}\r\n`;
    expect(parseChunks([Buffer.from(atLimit)])).toEqual([`body:put 0 0 1 ${jobBytesMax}:${"b".repeat(jobBytesMax)}`]);
    expect(planPutBody(`put 0 0 1 ${jobBytesMax + 1}`, jobBytesMax)).toEqual({ skip: jobBytesMax + 3, reply: "JOB_TOO_BIG" });
    expect(planPutBody("put 0 0 1", jobBytesMax)).toBeNull();
    expect(planPutBody("put 0 0 1 4294967296", jobBytesMax)).toBeNull();
    expect(planPutBody("put 0 0 1 2 ", jobBytesMax)).toBeNull();
    expect(planPutBody("putx 0 0 1 2", jobBytesMax)).toBeNull();
  });

  test("memory held for an unfinished line stays under the line limit", () => {
    const parser = new CommandParser(lineBytesMax, { planBody: () => null, input: () => {} });
    for (let i = 0; i < 10_000; i++) parser.push(Buffer.from("xxxxxxxx"));
    expect(parser.heldBytes).toBeLessThan(lineBytesMax);
  });
});
