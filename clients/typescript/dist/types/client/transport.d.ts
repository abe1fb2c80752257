import { type FrameSink } from "../protocol/frame-decoder.ts";
import type { ClientOptions } from "./types.ts";
export type WireMap = Record<string, unknown>;
export declare class Transport implements FrameSink {
    private socket;
    private state;
    private readonly encoder;
    private readonly replyDecoder;
    private frameDecoder;
    private readonly pending;
    private outgoing;
    private flushScheduled;
    private nextId;
    private reconnectAttempt;
    private reconnectTimer;
    /** One timer for all request timeouts: it sweeps the pending map while requests are pending. */
    private sweepTimer;
    readonly options: Required<Omit<ClientOptions, "token" | "clientName" | "onEvent">> & Pick<ClientOptions, "token" | "clientName" | "onEvent">;
    constructor(options: ClientOptions);
    get isOpen(): boolean;
    /** First connection: resolves once TCP is up and the hello reply came back. */
    open(): Promise<WireMap>;
    /** Send one request; resolves with the reply's fields, rejects with OrqError. */
    request(op: string, fields: WireMap, timeoutMs?: number, front?: boolean): Promise<WireMap>;
    close(): Promise<void>;
    frame(bytes: Uint8Array, start: number, end: number): boolean;
    frameTooLarge(lengthBytes: number): void;
    private helloFields;
    private connectSocket;
    private attach;
    private onSocketClosed;
    private scheduleReconnect;
    private reconnect;
    /**
     * Timeouts are checked by one sweep every sweepPeriodMs (a tenth of the
     * request timeout, 10 ms..1 s) instead of one timer per request, so a
     * request fails between its timeout and one period later.
     */
    private armSweep;
    private sweep;
    /** A method, not a field check: close() may run while reconnect() awaits. */
    private isClosed;
    private write;
    /** One socket write per turn for everything requested in it (node:net keeps what it cannot send yet). */
    private flush;
    private protocolFailure;
    private failAll;
}
