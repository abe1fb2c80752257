// The beanstalkd byte parser: turns a connection's bytes into command lines,
// put bodies and the answers the parser itself decides (an overlong line, a
// skipped body). It does no I/O and knows no command but through
// `planBody`, so tests feed it one byte at a time and split input at every
// offset. It follows beanstalkd's conn_process_io: a line ends at CRLF and
// may be at most `lineBytesMax` bytes with its CRLF; a longer one is
// discarded up to the next CRLF and answered BAD_FORMAT; a put's body is
// read with its CRLF (EXPECTED_CRLF when those two bytes are not CRLF), and a
// body refused before reading (JOB_TOO_BIG) is skipped, CRLF included.
// Memory per connection is bounded: an unfinished line is under
// lineBytesMax, a body buffer is what planBody allowed.

export type ParsedInput =
  /** A command line, CRLF removed, bytes as latin1 characters. */
  | { kind: "line"; line: string }
  /** A put line and its body; body null when the two bytes after it were not CRLF. */
  | { kind: "body"; line: string; body: Uint8Array | null }
  /** An answer the parser decided (BAD_FORMAT for an overlong line; JOB_TOO_BIG after skipping a body). */
  | { kind: "reply"; reply: string };

/** What follows a line: nothing (null), a body of `read` bytes, or `skip` bytes to throw away before answering `reply`. */
export type BodyPlan = { read: number } | { skip: number; reply: string } | null;

export interface ParserSink {
  planBody(line: string): BodyPlan;
  input(parsed: ParsedInput): void;
}

const cr = 13;
const lf = 10;

export const badFormatReply = "BAD_FORMAT";

type Mode = "line" | "discard" | "body" | "skip";

export class CommandParser {
  private mode: Mode = "line";
  /** Unconsumed bytes of an unfinished line (line mode) or a trailing CR (discard mode). */
  private pending: Uint8Array = new Uint8Array(0);
  private bodyLine = "";
  private body: Uint8Array = new Uint8Array(0);
  private bodyFilled = 0;
  private skipLeft = 0;
  private skipReply = "";

  constructor(
    private readonly lineBytesMax: number,
    private readonly sink: ParserSink,
  ) {}

  /** Bytes held for an unfinished line (bounded by lineBytesMax). */
  get heldBytes(): number {
    return this.pending.length + (this.mode === "body" ? this.bodyFilled : 0);
  }

  push(chunk: Uint8Array): void {
    let data = chunk;
    if (this.pending.length > 0) {
      data = new Uint8Array(this.pending.length + chunk.length);
      data.set(this.pending, 0);
      data.set(chunk, this.pending.length);
      this.pending = new Uint8Array(0);
    }
    let offset = 0;
    while (offset < data.length) {
      switch (this.mode) {
        case "line":
          offset = this.readLine(data, offset);
          if (offset < 0) return;
          break;
        case "discard":
          offset = this.discard(data, offset);
          if (offset < 0) return;
          break;
        case "body":
          offset = this.readBody(data, offset);
          break;
        case "skip": {
          const take = Math.min(this.skipLeft, data.length - offset);
          this.skipLeft -= take;
          offset += take;
          if (this.skipLeft === 0) {
            this.mode = "line";
            this.sink.input({ kind: "reply", reply: this.skipReply });
          }
          break;
        }
      }
    }
  }

  /** One line from `offset`, or -1 when the rest is an unfinished line (kept). */
  private readLine(data: Uint8Array, offset: number): number {
    const windowEnd = Math.min(data.length, offset + this.lineBytesMax);
    // Like beanstalkd's scan_line_end, only the first CR counts: a CR not followed by LF hides any later CRLF.
    for (let i = offset; i + 1 < windowEnd; i++) {
      if (data[i] !== cr) continue;
      if (data[i + 1] !== lf) break;
      const line = Buffer.from(data.buffer, data.byteOffset + offset, i - offset).toString("latin1");
      this.onLine(line);
      return i + 2;
    }
    if (data.length - offset >= this.lineBytesMax) {
      // No CRLF within the longest line: drop what we have and discard up to the next CRLF.
      this.mode = "discard";
      return offset + this.lineBytesMax;
    }
    this.pending = data.slice(offset);
    return -1;
  }

  private onLine(line: string): void {
    const plan = this.sink.planBody(line);
    if (plan === null) {
      this.sink.input({ kind: "line", line });
    } else if ("read" in plan) {
      this.mode = "body";
      this.bodyLine = line;
      this.body = new Uint8Array(plan.read + 2);
      this.bodyFilled = 0;
    } else if (plan.skip === 0) {
      this.sink.input({ kind: "reply", reply: plan.reply });
    } else {
      this.mode = "skip";
      this.skipLeft = plan.skip;
      this.skipReply = plan.reply;
    }
  }

  /** Discard through the next CRLF (then BAD_FORMAT), or -1 when none is in `data` (a trailing CR is kept). */
  private discard(data: Uint8Array, offset: number): number {
    for (let i = offset; i + 1 < data.length; i++) {
      if (data[i] !== cr || data[i + 1] !== lf) continue;
      this.mode = "line";
      this.sink.input({ kind: "reply", reply: badFormatReply });
      return i + 2;
    }
    if (data[data.length - 1] === cr) this.pending = data.slice(data.length - 1);
    return -1;
  }

  private readBody(data: Uint8Array, offset: number): number {
    const take = Math.min(this.body.length - this.bodyFilled, data.length - offset);
    this.body.set(data.subarray(offset, offset + take), this.bodyFilled);
    this.bodyFilled += take;
    if (this.bodyFilled === this.body.length) {
      const size = this.body.length - 2;
      const crlf = this.body[size] === cr && this.body[size + 1] === lf;
      this.mode = "line";
      this.sink.input({ kind: "body", line: this.bodyLine, body: crlf ? this.body.subarray(0, size) : null });
      this.body = new Uint8Array(0);
      this.bodyFilled = 0;
    }
    return offset + take;
  }
}
