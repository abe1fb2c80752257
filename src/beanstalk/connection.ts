// One beanstalkd connection: bytes go through the CommandParser into a queue
// of commands run one at a time, in order, and answered in order, as
// beanstalkd does (a waiting reserve holds up the commands behind it). A
// command whose engine work is done and only waits for its commit (put,
// delete, release, bury, touch: a PendingAnswer) lets the next command start,
// so pipelined puts share one commit; its answer still goes out in order. The socket stops being
// read while limits.beanstalkQueuedCommandsMax commands wait, or while
// unsent answers exceed limits.outputBytesPerConnectionMax. On close, a
// waiting reserve is cancelled and every job this connection reserved is
// released (an orq nack, no delay), as beanstalkd releases them.

import { AssertionError } from "../lib/assert.ts";
import { closeFlushMsMax } from "../limits.ts";
import type { ConnectionSocket } from "../server/connection.ts";
import type { Logger } from "../server/logger.ts";
import type { OutputBufferPool } from "../server/output-buffers.ts";
import { OutputQueue } from "../server/output-queue.ts";
import { ArgCursor } from "./arg-cursor.ts";
import { type Answer, AnswerError, closeAnswer, type FrontEnd, PendingAnswer, settled } from "./command-context.ts";
import { CommandParser, type BodyPlan, type ParsedInput, type ParserSink } from "./command-parser.ts";
import { findCommand } from "./command-table.ts";
import { planPutBody, putPrefix, putRun } from "./commands/producer.ts";
import { Session } from "./session.ts";

const crlf = Buffer.from("\r\n");

/** A put line with its body (or its missing CRLF): the inputs a put run gathers. */
function isPut(input: ParsedInput): input is ParsedInput & { kind: "body" } {
  return input.kind === "body" && input.line.startsWith(putPrefix) && !input.line.includes("\0");
}


export class BeanstalkConnection implements ParserSink {
  readonly session: Session;
  private readonly parser: CommandParser;
  private readonly output: OutputQueue;
  private readonly queue: ParsedInput[] = [];
  private running = false;
  private closing = false;
  /** quit was read: no command after it runs. */
  private quitting = false;
  /** Answers not yet sent because an earlier one waits for its commit. */
  private answersWaiting = 0;
  private lastAnswer: Promise<void> = Promise.resolve();
  private socketPaused = false;

  constructor(
    readonly id: number,
    private readonly socket: ConnectionSocket,
    private readonly fe: FrontEnd,
    private readonly logger: Logger,
    outputBuffers: OutputBufferPool,
  ) {
    this.session = new Session(id, -id);
    this.parser = new CommandParser(fe.limits.beanstalkLineBytesMax, this);
    this.output = new OutputQueue(socket, () => this.onOutputProgress(), outputBuffers);
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
    void this.pump();
  }

  onDrain(): void {
    this.output.drain();
  }

  planBody(line: string): BodyPlan {
    return planPutBody(line, this.fe.limits.beanstalkJobBytesMax);
  }

  input(parsed: ParsedInput): void {
    this.queue.push(parsed);
  }

  /** The socket closed: cancel a waiting reserve, release this connection's reservations, drop its tube references. */
  onClose(): void {
    const { fe, session } = this;
    if (session.closed) return;
    session.closed = true;
    this.closing = true;
    this.queue.length = 0;
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
      if (error instanceof AssertionError) throw error;
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
        if (isPut(input) && this.queue[0] !== undefined && isPut(this.queue[0])) {
          this.runPuts(input);
          continue;
        }
        const outcome = this.execute(input);
        if (outcome === closeAnswer) this.quitting = true;
        if (outcome instanceof PendingAnswer) this.answerInOrder(outcome.ready);
        else if (outcome instanceof Promise) this.answerInOrder(await this.guard(outcome));
        else this.answerInOrder(outcome);
        if (this.session.closed) return;
        this.checkReading();
      }
    } finally {
      this.running = false;
    }
  }

  /** A run of consecutive puts (up to limits.itemsPerEnqueueMax) as one engine enqueue, answered one by one in order. */
  private runPuts(first: ParsedInput & { kind: "body" }): void {
    const run: Array<ParsedInput & { kind: "body" }> = [first];
    const runMax = this.fe.limits.itemsPerEnqueueMax;
    while (run.length < runMax) {
      const next = this.queue[0];
      if (next === undefined || !isPut(next)) break;
      this.queue.shift();
      run.push(next);
    }
    this.fe.state.sweepReservations(this.fe.clock.nowMs());
    let answers: Array<Answer | PendingAnswer>;
    try {
      answers = putRun(this.fe, this.session, run);
    } catch (error) {
      const answer = this.answerForError(error);
      answers = run.map(() => answer);
    }
    for (const answer of answers) this.answerInOrder(answer instanceof PendingAnswer ? this.guard(answer.ready) : answer);
    this.checkReading();
  }

  /** Run one command up to its first wait; a thrown AnswerError is its answer. */
  private execute(input: ParsedInput): Answer | PendingAnswer | Promise<Answer> {
    if (input.kind === "reply") {
      // A skipped body is a put beanstalkd counted before refusing it.
      if (input.reply === "JOB_TOO_BIG") this.fe.state.countCommand("put");
      return input.reply;
    }
    this.fe.state.sweepReservations(this.fe.clock.nowMs());
    const line = input.line;
    if (line.includes("\0")) return "BAD_FORMAT";
    const spec = findCommand(line);
    if (spec === null) return "UNKNOWN_COMMAND";
    const body = input.kind === "body" ? input.body : undefined;
    try {
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
  private answerInOrder(answer: Answer | Promise<Answer>): void {
    if (this.answersWaiting === 0 && !(answer instanceof Promise)) {
      this.send(answer);
      return;
    }
    this.answersWaiting++;
    this.lastAnswer = this.lastAnswer.then(async () => {
      const ready = await answer;
      this.answersWaiting--;
      this.send(ready);
    });
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
    const { limits } = this.fe;
    const full = this.queue.length >= limits.beanstalkQueuedCommandsMax || this.output.unsentBytes > limits.outputBytesPerConnectionMax;
    if (full && !this.socketPaused && this.socket.pause !== undefined) {
      this.socketPaused = true;
      this.socket.pause();
    } else if (!full && this.socketPaused && this.socket.resume !== undefined) {
      this.socketPaused = false;
      this.socket.resume();
    }
  }
}
