/** A frame's 4-byte big-endian length prefix, written at `at`. */
export declare function writeFrameLength(target: Uint8Array, at: number, length: number): void;
/** Where encodeTo puts a frame: both calls copy the bytes before returning. */
export interface FrameOutput {
    /** A whole frame, its length prefix included: the first `length` bytes of `bytes` (all of them by default). */
    push(bytes: Uint8Array, length?: number): void;
    /** A frame's body: the output writes the 4-byte length, then the body. */
    pushFrame(body: Uint8Array): void;
}
export declare class FrameEncoder {
    private readonly encoder;
    private replies;
    encode(value: unknown): Uint8Array;
    /** Encode `value` as one frame into `out`. */
    encodeTo(value: unknown, out: FrameOutput): void;
    /** Built on first use: clients never send these replies. */
    private replyEncoder;
}
