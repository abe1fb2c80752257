// One beanstalkd connection: bytes go through the CommandParser into a queue
// of commands run one at a time, in order, and answered in order, as
// beanstalkd does (a waiting reserve holds up the commands behind it). A
// command whose engine work is done and only waits for its commit (put,
// delete, release, bury, touch: a PendingAnswer) lets the next command start,
// so pipelined puts share one commit; its answer still goes out in order. The
// socket stops being read while limits.beanstalkQueuedCommandsMax commands
// wait, or while its unsent answers are over their cap (server/back-pressure.ts,
// the MessagePack port's rule). Each answered command is reported to the
// request-done hook (server/request-done.ts) with its label
// (request-labels.ts) and the time from its arrival. An assertion that fails
// while a command runs or waits stops the process (server/fatal.ts), as on the
// MessagePack port. On close, a waiting reserve is cancelled and every job
// this connection reserved is released (an orq nack, no delay), as beanstalkd
// releases them.

import { assert, AssertionError } from "../lib/assert.ts";
import { monotonicStopwatch } from "../lib/clock.ts";
import { closeFlushMsMax } from "../limits.ts";
import { BackPressure } from "../server/back-pressure.ts";
import type { FatalHandler } from "../server/fatal.ts";
import type { ConnectionSocket, ListenedConnection } from "../server/listener.ts";
import type { Logger } from "../server/logger.ts";
import type { OutputBufferPool } from "../server/output-buffers.ts";
import { OutputQueue } from "../server/output-queue.ts";
import type { RequestDone } from "../server/request-done.ts";
import { ArgCursor } from "./arg-cursor.ts";
import { type Answer, AnswerError, closeAnswer, type FrontEnd, PendingAnswer, settled } from "./command-context.ts";
import { CommandParser, type BodyPlan, type ParsedInput, type ParserSink } from "./command-parser.ts";
import { type CommandSpec, findCommand } from "./command-table.ts";
import { planPutBody, putPrefix, putRun } from "./commands/producer.ts";
import { requestCode, requestOp } from "./request-labels.ts";
import { Session } from "./session.ts";

const crlf = Buffer.from("\r\n");

/** A put line with its body (or its missing CRLF): the inputs a put run gathers. */
function isPut(input: ParsedInput): input is ParsedInput & { kind: "body" } {
  return input.kind === "body" && input.line.startsWith(putPrefix) && !input.line.includes("\0");
}

/** The command a line names, as the table finds it; null for an answer the parser decided or a line with a NUL (BAD_FORMAT). */
function commandOf(input: ParsedInput): CommandSpec | null {
  return input.kind === "reply" || input.line.includes("\0") ? null : findCommand(input.line);
}

/** What the listener gives each connection besides the front end's shared parts. */
export interface ConnectionServices {
  readonly logger: Logger;
  readonly outputBuffers: OutputBufferPool;
  /** Where an assertion that fails in a command goes (server/fatal.ts). */
  readonly fatal: FatalHandler;
  /** Once per answered command (server/request-done.ts); null when nothing listens. */
  readonly onRequestDone: RequestDone | null;
  /** Test-only (ORQ_TEST_ASSERT_OP): the command that fails an assertion instead of running; null in production. */
  readonly testAssertCommand: string | null;
}

export class BeanstalkConnection implements ParserSink, ListenedConnection {
  readonly session: Session;
  private readonly parser: CommandParser;
  private readonly output: OutputQueue;
  private readonly backPressure: BackPressure;
  private readonly logger: Logger;
  private readonly queue: ParsedInput[] = [];
  /** When each queued input arrived (monotonic ms; 0 without a request-done hook), in the queue's order. */
  private readonly arrivalsMs: number[] = [];
  private running = false;
  private closing = false;
  /** quit was read: no command after it runs. */
  private quitting = false;
  /** Answers not yet sent because an earlier one waits for its commit. */
  private answersWaiting = 0;
  private lastAnswer: Promise<void> = Promise.resolve();
  /** Anything thrown out of a command's run that is not its answer: the process stops, as for an uncaught error. */
  private readonly failed = (error: unknown): void => this.services.fatal(error, { front_end: "beanstalk", connection: this.id });

  constructor(
    readonly id: number,
    private readonly socket: ConnectionSocket,
    private readonly fe: FrontEnd,
    private readonly services: ConnectionServices,
  ) {
    this.logger = services.logger;
    this.session = new Session(id, -id);
    this.parser = new CommandParser(fe.limits.beanstalkLineBytesMax, this);
    this.output = new OutputQueue(socket, () => this.onOutputProgress(), services.outputBuffers);
    this.backPressure = new BackPressure(socket, this.output, fe.limits.outputBytesPerConnectionMax);
    const state = fe.state;
    state.connections++;
    state.totalConnections++;
    state.tube(this.session.use).using++;
    for (const tube of this.session.watch) state.tube(tube).watching++;
  }

  /** Nothing queued, running or unsent. */
  get idle(): boolean {
    return !this.running && this.queue.length === 0 && this.answersWaiting === 0 && this.output.unsentBytes === 0;
  }

  onData(chunk: Uint8Array): void {
    if (this.closing) return;
    this.parser.push(chunk);
    this.checkReading();
    this.pump().catch(this.failed);
  }

  onDrain(): void {
    this.output.drain();
  }

  planBody(line: string): BodyPlan {
    return planPutBody(line, this.fe.limits.beanstalkJobBytesMax);
  }

  input(parsed: ParsedInput): void {
    this.queue.push(parsed);
    this.arrivalsMs.push(this.services.onRequestDone === null ? 0 : monotonicStopwatch.nowMs());
  }

  /** The socket closed: cancel a waiting reserve, release this connection's reservations, drop its tube references. */
  onClose(): void {
    const { fe, session } = this;
    if (session.closed) return;
    session.closed = true;
    this.closing = true;
    this.queue.length = 0;
    this.arrivalsMs.length = 0;
    this.output.close();
    fe.engine.cancelWaiters(session.owner);
    const state = fe.state;
    state.connections--;
    if (session.producer) state.producers--;
    if (session.worker) state.workers--;
    state.tube(session.use).using--;
    for (const tube of session.watch) state.tube(tube).watching--;
    const held = [...session.reservations.values()];
    for (const reservation of held) state.reservations.remove(session, reservation);
    const receipts = held.map((r) => ({ receipt: r.receipt, delayMs: null, metadata: null }));
    if (receipts.length === 0) return;
    settled(fe.engine.nack(fe.ns, receipts, fe.clock.nowMs())).catch((error: unknown) => {
      if (error instanceof AssertionError) return this.failed(error);
      this.logger.warn("beanstalk: releasing a closed connection's reservations failed", { connection: this.id, error: String(error) });
    });
  }

  /** Close once the answers so far are sent (quit, shutdown). */
  closeWhenFlushed(): void {
    this.closing = true;
    if (this.output.unsentBytes === 0) this.socket.end();
    else setTimeout(() => this.socket.end(), closeFlushMsMax).unref();
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (let input = this.queue.shift(); input !== undefined && !this.closing && !this.quitting; input = this.queue.shift()) {
        const arrivedMs = this.arrivalsMs.shift() ?? 0;
        if (isPut(input) && this.queue[0] !== undefined && isPut(this.queue[0])) {
          this.runPuts(input, arrivedMs);
          continue;
        }
        const spec = commandOf(input);
        const op = requestOp(input, spec);
        const outcome = this.execute(input, spec);
        if (outcome === closeAnswer) this.quitting = true;
        if (outcome instanceof PendingAnswer) this.answerInOrder(outcome.ready, op, arrivedMs);
        else if (outcome instanceof Promise) this.answerInOrder(await this.guard(outcome), op, arrivedMs);
        else this.answerInOrder(outcome, op, arrivedMs);
        if (this.session.closed) return;
        this.checkReading();
      }
    } finally {
      this.running = false;
    }
  }

  /** A run of consecutive puts (up to limits.itemsPerEnqueueMax) as one engine enqueue, answered one by one in order. */
  private runPuts(first: ParsedInput & { kind: "body" }, firstArrivedMs: number): void {
    const run: Array<ParsedInput & { kind: "body" }> = [first];
    const arrivedMs = [firstArrivedMs];
    const runMax = this.fe.limits.itemsPerEnqueueMax;
    while (run.length < runMax) {
      const next = this.queue[0];
      if (next === undefined || !isPut(next)) break;
      this.queue.shift();
      run.push(next);
      arrivedMs.push(this.arrivalsMs.shift() ?? 0);
    }
    const op = requestOp(first, commandOf(first));
    this.fe.state.sweepReservations(this.fe.clock.nowMs());
    let answers: Array<Answer | PendingAnswer>;
    try {
      answers = putRun(this.fe, this.session, run);
    } catch (error) {
      const answer = this.answerForError(error);
      answers = run.map(() => answer);
    }
    for (const [at, answer] of answers.entries()) {
      this.answerInOrder(answer instanceof PendingAnswer ? this.guard(answer.ready) : answer, op, arrivedMs[at] ?? 0);
    }
    this.checkReading();
  }

  /** Run one command up to its first wait; a thrown AnswerError is its answer. */
  private execute(input: ParsedInput, spec: CommandSpec | null): Answer | PendingAnswer | Promise<Answer> {
    if (input.kind === "reply") {
      // A skipped body is a put beanstalkd counted before refusing it.
      if (input.reply === "JOB_TOO_BIG") this.fe.state.countCommand("put");
      return input.reply;
    }
    this.fe.state.sweepReservations(this.fe.clock.nowMs());
    const line = input.line;
    if (spec === null) return line.includes("\0") ? "BAD_FORMAT" : "UNKNOWN_COMMAND";
    const body = input.kind === "body" ? input.body : undefined;
    try {
      if (spec.name === this.services.testAssertCommand) assert(false, `test-only assertion in beanstalkd command ${spec.name} (ORQ_TEST_ASSERT_OP)`);
      const outcome = spec.run({ fe: this.fe, session: this.session, line, args: new ArgCursor(line, spec.prefix.length), body });
      if (outcome instanceof PendingAnswer) return new PendingAnswer(this.guard(outcome.ready));
      return outcome;
    } catch (error) {
      return this.answerForError(error);
    }
  }

  /** A command's answer promise, with its errors turned into answers (an assertion still stops the process). */
  private guard(answer: Promise<Answer>): Promise<Answer> {
    return answer.catch((error: unknown) => this.answerForError(error));
  }

  private answerForError(error: unknown): Answer {
    if (error instanceof AnswerError) return error.answer;
    if (error instanceof AssertionError) throw error;
    this.logger.error("beanstalk: command failed", { connection: this.id, error: String(error) });
    return "INTERNAL_ERROR";
  }

  /** Send answers in command order: at once when nothing before it waits, else after the answers before it. */
  private answerInOrder(answer: Answer | Promise<Answer>, op: string, arrivedMs: number): void {
    if (this.answersWaiting === 0 && !(answer instanceof Promise)) {
      this.send(answer);
      this.done(op, arrivedMs, answer);
      return;
    }
    this.answersWaiting++;
    this.lastAnswer = this.lastAnswer
      .then(async () => {
        const ready = await answer;
        this.answersWaiting--;
        this.send(ready);
        this.done(op, arrivedMs, ready);
      })
      .catch(this.failed);
  }

  /** One command answered (or dropped with its closed connection, as the MessagePack port counts it): the request-done hook. */
  private done(op: string, arrivedMs: number, answer: Answer): void {
    const onDone = this.services.onRequestDone;
    if (onDone !== null) onDone(op, requestCode(answer), monotonicStopwatch.nowMs() - arrivedMs);
  }

  private send(answer: Answer): void {
    if (this.session.closed) return;
    if (answer === closeAnswer) {
      this.closeWhenFlushed();
      return;
    }
    this.write(answer);
    this.checkReading();
  }

  private write(answer: Exclude<Answer, typeof closeAnswer>): void {
    if (typeof answer === "string") {
      this.output.push(Buffer.from(`${answer}\r\n`, "latin1"));
      return;
    }
    this.output.push(Buffer.from(`${answer.line}\r\n`, "latin1"));
    this.output.push(answer.body);
    this.output.push(crlf);
  }

  private onOutputProgress(): void {
    if (this.closing && !this.session.closed && this.output.unsentBytes === 0) this.socket.end();
    this.checkReading();
  }

  private checkReading(): void {
    this.backPressure.update(this.queue.length >= this.fe.limits.beanstalkQueuedCommandsMax);
  }
}
