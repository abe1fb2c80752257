// The one place that configures @msgpack/msgpack for orq. Both sides reuse one
// Encoder and one Decoder (the functional encode()/decode() build a new one per
// call, about 3x slower).
//
// The request decoder adds three things the library lacks (the server reads
// frames with RequestFrameDecoder, request-frame-decoder.ts, which gives
// exactly what this one gives and hands it every frame it finds unusual, so
// this one stays the reference for what a frame decodes to):
// - a nesting bound (limits.decodeDepthMax), checked while decoding, so a frame
//   of 4 MiB of nested array headers fails after 32 levels instead of
//   building millions of arrays;
// - a mark on floats that hold whole numbers (8.0): they decode as WholeFloat,
//   so integer fields can insist on MessagePack integers (the contract says
//   "integer fields take MessagePack integers only"). Floats with a fraction
//   stay plain numbers (no integer check accepts them anyway). Fields that take
//   any value (requires, capabilities) turn WholeFloat back into numbers with
//   unmarkFloats(), where 8 == 8.0 again;
// - bins (and ext data) decoded as copies, not views of the frame: the
//   connection reuses its read buffer, and an enqueued payload lives on until
//   its commit; copied here once, the op that keeps a bin need not copy it
//   again (one JS-heap cell per enqueued item saved:
//   docs/decisions/013-lent-replies-and-scratch.md).
//
// The library declares these hooks private in its .d.ts, so the subclass
// installs them through the prototype; the hooks exist in 3.x (checked in
// test/protocol/msgpack-codec.test.ts).

import { Decoder, DecodeError, Encoder } from "@msgpack/msgpack";

export { DecodeError };

/** A MessagePack float whose value is a whole number, kept apart from integers. */
export class WholeFloat {
  constructor(readonly value: number) {}
}

export interface RequestDecoderOptions {
  depthMax: number;
  /** No string/bin/array/map can be longer than the frame that holds it. */
  frameBytesMax: number;
}

interface DecoderInternals {
  stack: { length: number };
  readF32(): number;
  readF64(): number;
  pushArrayState(size: number): void;
  pushMapState(size: number): void;
  decodeBinary(byteLength: number, headOffset: number): Uint8Array;
}

export class RequestDecoder extends Decoder<undefined> {
  depthMax = 32;

  /**
   * Decode one frame body. Arrays and maps are bounded by the body's length
   * (each element takes at least one byte), so a short frame cannot make the
   * library preallocate a huge array from a forged header.
   */
  decodeBody(body: Uint8Array): unknown {
    const lengths = this as unknown as { maxArrayLength: number; maxMapLength: number };
    lengths.maxArrayLength = body.length;
    lengths.maxMapLength = body.length;
    return this.decode(body);
  }
}

const base = Decoder.prototype as unknown as DecoderInternals;
const hooks = RequestDecoder.prototype as unknown as DecoderInternals & { depthMax: number };
const baseReadF32 = base.readF32;
const baseReadF64 = base.readF64;
const basePushArrayState = base.pushArrayState;
const basePushMapState = base.pushMapState;
const baseDecodeBinary = base.decodeBinary;
for (const name of ["readF32", "readF64", "pushArrayState", "pushMapState", "decodeBinary"] as const) {
  if (typeof base[name] !== "function") throw new Error(`@msgpack/msgpack Decoder lacks ${name}: check the pinned version`);
}
hooks.readF32 = function (this: DecoderInternals): number {
  const value = baseReadF32.call(this);
  return (Number.isInteger(value) ? new WholeFloat(value) : value) as number;
};
hooks.readF64 = function (this: DecoderInternals): number {
  const value = baseReadF64.call(this);
  return (Number.isInteger(value) ? new WholeFloat(value) : value) as number;
};
/** A bin (or ext data) as a copy of its bytes: the request owns its bins, the frame is the connection's to reuse. */
hooks.decodeBinary = function (this: DecoderInternals, byteLength: number, headOffset: number): Uint8Array {
  return baseDecodeBinary.call(this, byteLength, headOffset).slice();
};
hooks.pushArrayState = function (this: DecoderInternals & { depthMax: number }, size: number): void {
  if (this.stack.length >= this.depthMax) throw new DecodeError(`value nested deeper than ${this.depthMax} levels`);
  basePushArrayState.call(this, size);
};
hooks.pushMapState = function (this: DecoderInternals & { depthMax: number }, size: number): void {
  if (this.stack.length >= this.depthMax) throw new DecodeError(`value nested deeper than ${this.depthMax} levels`);
  basePushMapState.call(this, size);
};

export function createRequestDecoder(options: RequestDecoderOptions): RequestDecoder {
  const lengthMax = options.frameBytesMax;
  const decoder = new RequestDecoder({
    maxStrLength: lengthMax,
    maxBinLength: lengthMax,
    maxArrayLength: lengthMax,
    maxMapLength: lengthMax,
    maxExtLength: lengthMax,
  });
  decoder.depthMax = options.depthMax;
  return decoder;
}

/** A plain decoder (the client decodes replies with it). */
export function createReplyDecoder(): Decoder<undefined> {
  return new Decoder();
}

/** Encoder options used everywhere: undefined fields are left out (optional fields are absent, not nil). */
export function createEncoder(): Encoder<undefined> {
  return new Encoder({ ignoreUndefined: true, initialBufferSize: 64 * 1024 });
}

/** True for a map decoded from MessagePack (a plain object), false for arrays, bins, ext values and scalars. */
export function isPlainMap(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  return Object.getPrototypeOf(value) === Object.prototype;
}

/**
 * Copy a decoded value with every WholeFloat turned back into a number and
 * every bin copied (so the copy shares nothing with the request). Recursive: the
 * decoder bounds the depth (limits.decodeDepthMax), and this runs on every
 * dequeue with capabilities, where the work-stack version's closures cost
 * more than the copy. A map's keys are set last to first, the order the
 * work-stack version set them in (requires come back from `get` in it).
 */
export function unmarkFloats(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (value instanceof WholeFloat) return value.value;
  if (Array.isArray(value)) {
    const copy: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) copy[i] = unmarkFloats(value[i]);
    return copy;
  }
  if (isPlainMap(value)) {
    const copy: Record<string, unknown> = {};
    // Keys in the order the client sent them, so `get` echoes `requires` and
    // `capabilities` as written.
    for (const key of Object.keys(value)) copy[key] = unmarkFloats(value[key]);
    return copy;
  }
  if (value instanceof Uint8Array) return value.slice();
  return value;
}
