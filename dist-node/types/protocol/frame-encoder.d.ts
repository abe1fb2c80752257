export declare class FrameEncoder {
    private readonly encoder;
    private replies;
    encode(value: unknown): Uint8Array;
    /** Built on first use: clients never send these replies. */
    private replyEncoder;
}
