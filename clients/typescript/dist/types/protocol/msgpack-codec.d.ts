import { Decoder, DecodeError, Encoder } from "@msgpack/msgpack";
export { DecodeError };
/** A MessagePack float whose value is a whole number, kept apart from integers. */
export declare class WholeFloat {
    readonly value: number;
    constructor(value: number);
}
export interface RequestDecoderOptions {
    depthMax: number;
    /** No string/bin/array/map can be longer than the frame that holds it. */
    frameBytesMax: number;
}
export declare class RequestDecoder extends Decoder<undefined> {
    depthMax: number;
    /**
     * Decode one frame body. Arrays and maps are bounded by the body's length
     * (each element takes at least one byte), so a short frame cannot make the
     * library preallocate a huge array from a forged header.
     */
    decodeBody(body: Uint8Array): unknown;
}
export declare function createRequestDecoder(options: RequestDecoderOptions): RequestDecoder;
/** A plain decoder (the client decodes replies with it). */
export declare function createReplyDecoder(): Decoder<undefined>;
/** Encoder options used everywhere: undefined fields are left out (optional fields are absent, not nil). */
export declare function createEncoder(): Encoder<undefined>;
/** True for a map decoded from MessagePack (a plain object), false for arrays, bins, ext values and scalars. */
export declare function isPlainMap(value: unknown): value is Record<string, unknown>;
/**
 * Copy a decoded value with every WholeFloat turned back into a number and
 * every bin copied (so the copy shares nothing with the request). Recursive: the
 * decoder bounds the depth (limits.decodeDepthMax), and this runs on every
 * dequeue with capabilities, where the work-stack version's closures cost
 * more than the copy. A map's keys are set last to first, the order the
 * work-stack version set them in (requires come back from `get` in it).
 */
export declare function unmarkFloats(value: unknown): unknown;
