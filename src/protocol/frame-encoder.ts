// Encodes one value as one frame: a 4-byte big-endian length, then the
// MessagePack body. One Encoder is reused; the result is a fresh buffer the
// caller owns (the encoder's own buffer is overwritten by the next call).

import type { Encoder } from "@msgpack/msgpack";
import { createEncoder } from "./msgpack-codec.ts";
import { frameHeaderBytes } from "./frame-decoder.ts";

export class FrameEncoder {
  private readonly encoder: Encoder<undefined> = createEncoder();

  encode(value: unknown): Uint8Array {
    const body = this.encoder.encodeSharedRef(value);
    const frame = new Uint8Array(frameHeaderBytes + body.length);
    const length = body.length;
    frame[0] = length >>> 24;
    frame[1] = (length >>> 16) & 0xff;
    frame[2] = (length >>> 8) & 0xff;
    frame[3] = length & 0xff;
    frame.set(body, frameHeaderBytes);
    return frame;
  }
}
