// One MessagePack client connection: its frame decoder, its output queue, its
// session (authentication scope) and its count of requests in flight. It
// stops reading (pauses the socket and the decoder) while its unsent output is
// over its cap or its requests in flight reach limits.inflightPerConnectionMax,
// and resumes when both are back under (back-pressure.ts, the rule both front
// ends share), so a client that never reads its replies cannot grow server
// memory.

import { closeFlushMsMax, type Limits } from "../limits.ts";
import { FrameDecoder, type FrameSink } from "../protocol/frame-decoder.ts";
import type { FrameEncoder } from "../protocol/frame-encoder.ts";
import type { WireError } from "../protocol/wire-types.ts";
import type { NamespaceScope } from "./auth.ts";
import { BackPressure } from "./back-pressure.ts";
import type { Dispatcher, RequestSource } from "./dispatcher.ts";
import type { ConnectionSocket, ListenedConnection } from "./listener.ts";
import type { Logger } from "./logger.ts";
import type { Session } from "./op-types.ts";
import type { OutputBufferPool } from "./output-buffers.ts";
import { OutputQueue } from "./output-queue.ts";
import type { Source } from "./request-reader.ts";

export interface ConnectionHooks {
  /** Requests in flight reached zero, or output drained: the server may be waiting for idleness. */
  onSettled(): void;
}

export class Connection implements RequestSource, FrameSink, ListenedConnection {
  readonly session: Session;
  private readonly decoder: FrameDecoder;
  private readonly output: OutputQueue;
  private readonly backPressure: BackPressure;
  private inflight = 0;
  private closing = false;
  private closed = false;

  constructor(
    readonly id: number,
    private readonly socket: ConnectionSocket,
    initialScope: NamespaceScope | null,
    private readonly limits: Limits,
    private readonly dispatcher: Dispatcher,
    private readonly encoder: FrameEncoder,
    private readonly logger: Logger,
    private readonly hooks: ConnectionHooks,
    outputBuffers: OutputBufferPool,
  ) {
    this.session = { connectionId: id, scope: initialScope, readOnly: false };
    this.decoder = new FrameDecoder(limits.frameBytesMax, this);
    this.output = new OutputQueue(socket, () => this.onOutputProgress(), outputBuffers);
    this.backPressure = new BackPressure(socket, this.output, limits.outputBytesPerConnectionMax);
  }

  get inflightCount(): number {
    return this.inflight;
  }

  get unsentBytes(): number {
    return this.output.unsentBytes;
  }

  /** No reply pending and nothing left to write. */
  get idle(): boolean {
    return this.inflight === 0 && this.output.unsentBytes === 0;
  }

  // Socket events (wired by the listener, listener.ts).

  onData(chunk: Uint8Array): void {
    if (this.closing) return;
    this.decoder.push(chunk);
    if (this.decoder.backlogBytes > this.limits.outputBytesPerConnectionMax) {
      this.logger.warn("closing connection: too much unread input while paused", { connection: this.id });
      this.closeNow();
      return;
    }
    if (this.decoder.paused) this.backPressure.pause();
  }

  onDrain(): void {
    this.output.drain();
  }

  onClose(): void {
    this.closed = true;
    this.closing = true;
    this.decoder.stop();
    this.output.close();
  }

  // FrameSink: the decoder's events.

  frame(bytes: Uint8Array, start: number, end: number): boolean {
    this.dispatcher.handleFrame(this, bytes, start, end);
    return this.canRead();
  }

  frameTooLarge(lengthBytes: number): void {
    this.fail({
      code: "FRAME_TOO_LARGE",
      message: `frame of ${lengthBytes} bytes is over max_frame_bytes (${this.limits.frameBytesMax})`,
    });
  }

  // RequestSource: the dispatcher's view of this connection.

  send(reply: Source): void {
    if (this.closed) return;
    this.encoder.encodeTo(reply, this.output);
  }

  fail(error: WireError): void {
    if (this.closing) return;
    this.send({ id: 0, ok: false, error });
    this.closing = true;
    this.decoder.stop();
    this.logger.info("closing connection after protocol error", { connection: this.id, code: error.code });
    setTimeout(() => this.closeNow(), closeFlushMsMax).unref();
  }

  requestStarted(): void {
    this.inflight++;
  }

  requestFinished(): void {
    this.inflight--;
    if (this.inflight === 0) this.hooks.onSettled();
    this.maybeResume();
  }

  /** Server shutdown: close once everything queued has been written. */
  closeWhenFlushed(): void {
    this.closing = true;
    this.decoder.stop();
    if (this.output.unsentBytes === 0) this.closeNow();
    else setTimeout(() => this.closeNow(), closeFlushMsMax).unref();
  }

  closeNow(): void {
    if (this.closed) return;
    this.closed = true;
    this.decoder.stop();
    this.output.close();
    this.socket.end();
  }

  private canRead(): boolean {
    return !this.closing && !this.backPressure.outputFull && this.inflight < this.limits.inflightPerConnectionMax;
  }

  private onOutputProgress(): void {
    if (this.closing && this.output.unsentBytes === 0) {
      this.closeNow();
      return;
    }
    if (this.output.unsentBytes === 0) this.hooks.onSettled();
    this.maybeResume();
  }

  private maybeResume(): void {
    if (!this.decoder.paused || !this.canRead()) return;
    this.backPressure.resume();
    this.decoder.resume();
    if (this.decoder.paused) this.backPressure.pause();
  }
}
