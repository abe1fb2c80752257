// Encodes one value as one frame: a 4-byte big-endian length, then the
// MessagePack body. One Encoder is reused. `encodeTo` hands the frame to a
// FrameOutput that copies it at once (a connection's output queue), so the
// generic path makes no buffer per reply; `encode` returns a fresh frame the
// caller owns (the encoder's own buffer is overwritten by the next call).
// Dequeue and ack replies (DeliveriesReply, AckReply) take the hand-written
// path in reply-encoder.ts; everything else goes through @msgpack/msgpack.

import type { Encoder } from "@msgpack/msgpack";
import { createEncoder } from "./msgpack-codec.ts";
import { frameHeaderBytes } from "./frame-decoder.ts";
import { AckReply, DeliveriesReply, ReplyEncoder } from "./reply-encoder.ts";

/** A frame's 4-byte big-endian length prefix, written at `at`. */
export function writeFrameLength(target: Uint8Array, at: number, length: number): void {
  target[at] = length >>> 24;
  target[at + 1] = (length >>> 16) & 0xff;
  target[at + 2] = (length >>> 8) & 0xff;
  target[at + 3] = length & 0xff;
}

/** Where encodeTo puts a frame: both calls copy the bytes before returning. */
export interface FrameOutput {
  /** A whole frame, its length prefix included: the first `length` bytes of `bytes` (all of them by default). */
  push(bytes: Uint8Array, length?: number): void;
  /** A frame's body: the output writes the 4-byte length, then the body. */
  pushFrame(body: Uint8Array): void;
}

export class FrameEncoder {
  private readonly encoder: Encoder<undefined> = createEncoder();
  private replies: ReplyEncoder | null = null;

  encode(value: unknown): Uint8Array {
    if (value instanceof DeliveriesReply) return this.replyEncoder().deliveriesFrame(value.id, value.deliveries);
    if (value instanceof AckReply) return this.replyEncoder().ackFrame(value.id, value.acked, value.stale);
    const body = this.encoder.encodeSharedRef(value);
    const frame = new Uint8Array(frameHeaderBytes + body.length);
    writeFrameLength(frame, 0, body.length);
    frame.set(body, frameHeaderBytes);
    return frame;
  }

  /** Encode `value` as one frame into `out`. */
  encodeTo(value: unknown, out: FrameOutput): void {
    // The hand-written replies are copied by `out` from the start of the encoder's buffer: no copy, not even a view, per reply.
    // (frameBytes is read after the write: a write may grow the buffer into a new one.)
    if (value instanceof DeliveriesReply) {
      const replies = this.replyEncoder();
      const length = replies.writeDeliveriesFrame(value.id, value.deliveries);
      out.push(replies.frameBytes, length);
    } else if (value instanceof AckReply) {
      const replies = this.replyEncoder();
      const length = replies.writeAckFrame(value.id, value.acked, value.stale);
      out.push(replies.frameBytes, length);
    } else out.pushFrame(this.encoder.encodeSharedRef(value));
  }

  /** Built on first use: clients never send these replies. */
  private replyEncoder(): ReplyEncoder {
    if (this.replies === null) this.replies = new ReplyEncoder();
    return this.replies;
  }
}
