// What happens when an assertion fails while serving: the process stops.
// lib/assert.ts promises it: a broken invariant means memory (heaps, counts,
// the open write set) may be half-changed, and answering INTERNAL and
// carrying on would serve from that state. The way back is a restart, which
// rebuilds memory from LMDB (only committed state survives; at-least-once
// holds). The line is logged at fatal level and the process exits with
// assertionExitCode, so a supervisor sees why and restarts it.
//
// Bun does not stop on a throw inside a socket callback (it goes to the
// socket's error handler), so the server routes AssertionErrors here itself;
// anything uncaught elsewhere (timers, promise callbacks) is routed here by
// installFatalHandlers, which `orq serve` calls once at start.

import { AssertionError } from "../lib/assert.ts";
import type { LogFields, Logger } from "./logger.ts";

/** Exit code after a failed assertion (70, EX_SOFTWARE in sysexits.h: an internal software error). */
export const assertionExitCode = 70;
/** Exit code after any other uncaught error (1, what Bun itself exits with). */
export const uncaughtErrorExitCode = 1;

/** Stops the process; the default is the real exit (tests pass their own to observe it). */
export type FatalHandler = (error: unknown, context: LogFields) => void;

export function exitOnFatal(logger: Logger, exit: (code: number) => void = (code) => process.exit(code)): FatalHandler {
  return (error, context) => {
    const isAssertion = error instanceof AssertionError;
    logger.fatal(isAssertion ? "assertion failed: stopping (a restart recovers from storage)" : "uncaught error: stopping", { ...context, error });
    exit(isAssertion ? assertionExitCode : uncaughtErrorExitCode);
  };
}

/** Route uncaught exceptions and unhandled rejections to `fatal` (Bun would exit 1 on them without a log line). */
export function installFatalHandlers(fatal: FatalHandler): void {
  process.on("uncaughtException", (error) => fatal(error, { source: "uncaught exception" }));
  process.on("unhandledRejection", (reason) => fatal(reason, { source: "unhandled rejection" }));
}
