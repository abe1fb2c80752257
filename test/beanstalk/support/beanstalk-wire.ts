// A raw beanstalkd protocol connection for tests: sends bytes as given and
// reads whole answers (a line, plus the body of RESERVED, FOUND and OK), so
// a test can play the same script against beanstalkd and against orq.

import type { Socket } from "bun";

/** Longest a test waits for one answer before reporting it missing (the longest scripted wait is 10 s). */
const answerWaitMsMax = 15_000;

export class BeanstalkWire {
  private buffer = Buffer.alloc(0);
  private waiting: (() => void) | null = null;
  private ended = false;
  private socket!: Socket<undefined>;

  static async connect(port: number, host = "127.0.0.1"): Promise<BeanstalkWire> {
    const wire = new BeanstalkWire();
    wire.socket = await Bun.connect({
      hostname: host,
      port,
      socket: {
        data: (_socket, chunk) => {
          wire.buffer = Buffer.concat([wire.buffer, chunk]);
          wire.wake();
        },
        close: () => {
          wire.ended = true;
          wire.wake();
        },
        error: () => {
          wire.ended = true;
          wire.wake();
        },
      },
    });
    return wire;
  }

  send(data: string | Uint8Array): void {
    this.socket.write(typeof data === "string" ? Buffer.from(data, "latin1") : data);
  }

  /** Send a command line (CRLF added) and read its answer. */
  async command(line: string): Promise<string> {
    this.send(`${line}\r\n`);
    return this.answer();
  }

  /** One answer: its line, and for RESERVED/FOUND/OK a newline and the body (as latin1). "<closed>" when the server closed, "<no answer>" when it said nothing for answerWaitMsMax. */
  async answer(): Promise<string> {
    try {
      return await this.readAnswer();
    } catch (error) {
      if (error instanceof Error && error.message === "no answer") return "<no answer>";
      throw error;
    }
  }

  private async readAnswer(): Promise<string> {
    const line = await this.readLine();
    if (line === null) return "<closed>";
    const match = /^(?:RESERVED|FOUND) \S+ (\d+)$|^OK (\d+)$/.exec(line);
    if (match === null) return line;
    const bytes = Number(match[1] ?? match[2]);
    const body = await this.readBytes(bytes + 2);
    if (body === null) return `${line}\n<closed>`;
    return `${line}\n${body.subarray(0, bytes).toString("latin1")}`;
  }

  /** Resolves once the server closed the connection. */
  async closed(): Promise<void> {
    while (!this.ended) await this.more();
  }

  close(): void {
    this.socket.end();
  }

  private async readLine(): Promise<string | null> {
    for (;;) {
      const at = this.buffer.indexOf("\r\n");
      if (at >= 0) {
        const line = this.buffer.subarray(0, at).toString("latin1");
        this.buffer = this.buffer.subarray(at + 2);
        return line;
      }
      if (this.ended) return null;
      await this.more();
    }
  }

  private async readBytes(count: number): Promise<Buffer | null> {
    while (this.buffer.length < count) {
      if (this.ended) return null;
      await this.more();
    }
    const out = this.buffer.subarray(0, count);
    this.buffer = this.buffer.subarray(count);
    return out;
  }

  /** Wait for more bytes; past answerWaitMsMax the answer is reported missing (a guard against a hung test, not a timing check). */
  private more(): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no answer")), answerWaitMsMax);
      this.waiting = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.();
  }
}
