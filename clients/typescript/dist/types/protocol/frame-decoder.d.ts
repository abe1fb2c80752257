export declare const frameHeaderBytes = 4;
export interface FrameSink {
    /**
     * One complete frame body: bytes [start, end) of `bytes`, valid only during
     * this call (the chunk is the caller's to reuse). Return false to pause the decoder.
     */
    frame(bytes: Uint8Array, start: number, end: number): boolean;
    /** A header announced a body longer than the maximum; the decoder stops for good. */
    frameTooLarge(lengthBytes: number): void;
}
export declare class FrameDecoder {
    private readonly frameBytesMax;
    private readonly sink;
    private readonly header;
    private headerFilled;
    private body;
    private bodyFilled;
    private backlog;
    private backlogBytesTotal;
    private pausedFlag;
    private failed;
    constructor(frameBytesMax: number, sink: FrameSink);
    get paused(): boolean;
    /** Bytes received but not yet processed because the sink paused the decoder. */
    get backlogBytes(): number;
    /** Stop for good (the connection is closing): later bytes are ignored. */
    stop(): void;
    push(chunk: Uint8Array): void;
    /** Process stashed bytes until the sink pauses again or the backlog is empty. */
    resume(): void;
    private stash;
    /** Returns when the chunk is consumed, the sink paused, or the stream failed. */
    private process;
    /**
     * Feed the start of a chunk into the partial header or body. Returns the
     * offset where whole-frame parsing may continue, or -1 when the chunk is used up.
     */
    private continuePartial;
    private fail;
}
