// Argument checks shared by the command files, each answering BAD_FORMAT the
// way beanstalkd does: a job id that must be the whole rest of the line, a
// tube name that must be the whole rest and valid, and a command that takes
// no argument at all.

import { AnswerError, type CommandContext } from "./command-context.ts";
import { orqIdOf } from "./job-mapping.ts";
import { isValidTubeName } from "./tube-names.ts";

export const badFormat = (): AnswerError => new AnswerError("BAD_FORMAT");

/** `<id>` as the whole rest of the line: the job's digits and the orq id they name (null: no such item can exist). */
export function jobIdArg(ctx: CommandContext): { digits: string; orqId: string | null } {
  const digits = ctx.args.u64();
  if (digits === null || !ctx.args.atEnd()) throw badFormat();
  return { digits, orqId: orqIdOf(digits) };
}

/** `<tube>` as the whole rest of the line (no spaces around it), valid by beanstalkd's rules. */
export function tubeArg(ctx: CommandContext): string {
  const name = ctx.args.rest();
  if (!isValidTubeName(name, ctx.fe.limits.beanstalkTubeBytesMax)) throw badFormat();
  return name;
}

/** A command without arguments: the line must be exactly its name. */
export function noArgs(ctx: CommandContext, name: string): void {
  if (ctx.line !== name) throw badFormat();
}
