// How the beanstalkd port's commands show in the request metrics
// (`orq_requests_total{op,code}`, `orq_request_duration_seconds{op}`), which
// both ports feed through the one request-done hook (server/request-done.ts).
// `op` is the command's name behind "beanstalk:" ("beanstalk:put",
// "beanstalk:reserve-with-timeout"; "beanstalk:unknown" for a line that names
// no command), so the MessagePack ops' series keep their meaning and one
// matcher (op=~"beanstalk:.*") selects the port. `code` is "OK" for an answer
// that carries what was asked and the answer itself for beanstalkd's negative
// ones (NOT_FOUND, TIMED_OUT, DRAINING, ...), as the MessagePack port gives
// its error codes. Both sets are closed, so the series stay bounded;
// observability imports no front end, so `orq serve` hands them to
// createMetrics.

import { closeAnswer, type Answer } from "./command-context.ts";
import type { ParsedInput } from "./command-parser.ts";
import { type CommandSpec, commandTable } from "./command-table.ts";

/** beanstalkd's negative answers (protocol.txt), each a whole line without arguments. */
export const negativeAnswers: readonly string[] = [
  "BAD_FORMAT",
  "UNKNOWN_COMMAND",
  "OUT_OF_MEMORY",
  "INTERNAL_ERROR",
  "DRAINING",
  "JOB_TOO_BIG",
  "EXPECTED_CRLF",
  "NOT_FOUND",
  "TIMED_OUT",
  "DEADLINE_SOON",
  "NOT_IGNORED",
];

const negativeAnswerSet: ReadonlySet<string> = new Set(negativeAnswers);

const opPrefix = "beanstalk:";
export const unknownCommandOp = `${opPrefix}unknown`;
const putOp = `${opPrefix}put`;

/** Made once per command, so labelling a request builds no string. */
const opOfCommand: ReadonlyMap<CommandSpec, string> = new Map(commandTable.map((spec) => [spec, `${opPrefix}${spec.name}`]));

/** Every op and code label this port gives (for the metrics' closed sets). */
export const beanstalkRequestLabels: Readonly<{ ops: readonly string[]; codes: readonly string[] }> = Object.freeze({
  ops: [...opOfCommand.values(), unknownCommandOp],
  codes: negativeAnswers,
});

/** The op label of a command line (`spec` as the table found it) or of an answer the parser decided. */
export function requestOp(input: ParsedInput, spec: CommandSpec | null): string {
  if (spec !== null) return opOfCommand.get(spec) ?? unknownCommandOp;
  // A put whose body was skipped as too big is a put; an overlong line names nothing.
  return input.kind === "reply" && input.reply === "JOB_TOO_BIG" ? putOp : unknownCommandOp;
}

/** The code label of an answer: the negative answer itself, else OK (quit, which has none, is OK). */
export function requestCode(answer: Answer): string {
  if (answer === closeAnswer || typeof answer !== "string") return "OK";
  return negativeAnswerSet.has(answer) ? answer : "OK";
}
