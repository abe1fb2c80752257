// A small pipelined beanstalkd text-protocol client for the peer comparison:
// `use`, `watch`, `put`, `reserve-with-timeout`, `delete`. beanstalkd answers
// each connection's commands in order, so replies are matched to a FIFO of
// handlers. Writes are coalesced per turn like the orq driver's, so both
// peers are driven the same way.

import { SocketWriter } from "./socket-writer.ts";

/** A reply's first line without CRLF, and the body that follows `RESERVED id bytes` (a view: read it at once). */
export type BeanstalkHandler = (line: string, body: Uint8Array | null) => void;

const CR = 13;
const LF = 10;
const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

export class BeanstalkConn {
  private readonly writer = new SocketWriter();
  private readonly handlers: BeanstalkHandler[] = [];
  private handlerHead = 0;
  private leftover: Uint8Array | null = null;
  private socketRef: { end(): void } | null = null;
  private closed = false;

  static async connect(host: string, port: number): Promise<BeanstalkConn> {
    const conn = new BeanstalkConn();
    const socket = await Bun.connect({
      hostname: host,
      port,
      socket: {
        data: (_socket, chunk) => conn.onData(chunk),
        drain: () => conn.writer.onDrain(),
        close: () => conn.onClose(),
        error: () => conn.onClose(),
      },
    });
    socket.setNoDelay(true);
    conn.writer.attach(socket as never);
    conn.socketRef = socket;
    return conn;
  }

  get inFlight(): number {
    return this.handlers.length - this.handlerHead;
  }

  command(line: string, handler: BeanstalkHandler): void {
    if (this.closed) {
      handler("CLOSED", null);
      return;
    }
    this.writer.appendBytes(textEncoder.encode(line + "\r\n"));
    this.handlers.push(handler);
  }

  put(body: Uint8Array, handler: BeanstalkHandler, priority = 0): void {
    if (this.closed) {
      handler("CLOSED", null);
      return;
    }
    this.writer.appendBytes(textEncoder.encode(`put ${priority} 0 60 ${body.length}\r\n`));
    this.writer.appendBytes(body);
    this.writer.appendBytes(CRLF_BYTES);
    this.handlers.push(handler);
  }

  /** Sends a command and resolves with its reply line; rejects unless the line starts with `expected`. */
  call(line: string, expected: string): Promise<string> {
    return new Promise((resolve, reject) =>
      this.command(line, (reply) => (reply.startsWith(expected) ? resolve(reply) : reject(new Error(`${line}: ${reply}`)))),
    );
  }

  close(): void {
    this.socketRef?.end();
    this.onClose();
  }

  private onData(chunk: Uint8Array): void {
    let bytes = chunk;
    if (this.leftover !== null) {
      bytes = new Uint8Array(this.leftover.length + chunk.length);
      bytes.set(this.leftover);
      bytes.set(chunk, this.leftover.length);
      this.leftover = null;
    }
    let offset = 0;
    for (;;) {
      const lineEnd = findCrlf(bytes, offset);
      if (lineEnd < 0) break;
      const line = textDecoder.decode(bytes.subarray(offset, lineEnd));
      let next = lineEnd + 2;
      let body: Uint8Array | null = null;
      if (line.startsWith("RESERVED ") || line.startsWith("OK ")) {
        const bodyBytes = Number(line.slice(line.lastIndexOf(" ") + 1));
        if (bytes.length - next < bodyBytes + 2) break;
        body = bytes.subarray(next, next + bodyBytes);
        next += bodyBytes + 2;
      }
      offset = next;
      this.dispatch(line, body);
    }
    if (offset < bytes.length) this.leftover = bytes.slice(offset);
  }

  private dispatch(line: string, body: Uint8Array | null): void {
    const handler = this.handlers[this.handlerHead];
    if (handler === undefined) throw new Error(`beanstalkd reply without a command: ${line}`);
    this.handlers[this.handlerHead] = NOOP;
    this.handlerHead++;
    if (this.handlerHead > 4096 && this.handlerHead * 2 > this.handlers.length) {
      this.handlers.splice(0, this.handlerHead);
      this.handlerHead = 0;
    }
    handler(line, body);
  }

  private onClose(): void {
    if (this.closed) return;
    this.closed = true;
    const pending = this.handlers.slice(this.handlerHead);
    this.handlers.length = 0;
    this.handlerHead = 0;
    for (const handler of pending) handler("CLOSED", null);
  }
}

const CRLF_BYTES = new Uint8Array([CR, LF]);
const NOOP: BeanstalkHandler = () => {};

function findCrlf(bytes: Uint8Array, from: number): number {
  let index = bytes.indexOf(CR, from);
  while (index >= 0 && index + 1 < bytes.length) {
    if (bytes[index + 1] === LF) return index;
    index = bytes.indexOf(CR, index + 1);
  }
  return -1;
}
