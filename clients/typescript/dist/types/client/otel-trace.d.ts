import type { Delivery } from "./types.ts";
interface SpanContext {
    traceId: string;
    spanId: string;
    traceFlags: number;
    isRemote?: boolean;
    traceState?: {
        serialize(): string;
    };
}
interface Span {
    spanContext(): SpanContext;
    setStatus(status: {
        code: number;
        message?: string;
    }): void;
    recordException(exception: unknown): void;
    end(): void;
}
interface Context {
    readonly __brand?: "otel-context";
}
interface Tracer {
    startActiveSpan<T>(name: string, options: {
        kind: number;
        attributes: Record<string, string | number>;
    }, context: Context, fn: (span: Span) => T): T;
}
/** The members of @opentelemetry/api this file uses. */
interface OtelApi {
    trace: {
        getSpan(context: Context): Span | undefined;
        setSpanContext(context: Context, spanContext: SpanContext): Context;
        isSpanContextValid(spanContext: SpanContext): boolean;
        getTracer(name: string): Tracer;
    };
    context: {
        active(): Context;
    };
    createTraceState(raw?: string): {
        serialize(): string;
    };
    SpanKind: {
        CONSUMER: number;
    };
    SpanStatusCode: {
        ERROR: number;
    };
}
/** @opentelemetry/api, or null when it is not installed; imported once. */
export declare function loadOtel(): Promise<OtelApi | null>;
/** The active span's context as an item's `trace`, or undefined when no valid span is active. */
export declare function activeTrace(api: OtelApi): string | undefined;
/**
 * Run `handler` in a CONSUMER span named `process <topic>`, child of the
 * delivery's trace context (or of the active context when it has none or an
 * invalid one). A throw marks the span as an error and is rethrown.
 */
export declare function inConsumerSpan<T>(api: OtelApi, delivery: Delivery, handler: () => Promise<T>): Promise<T>;
export {};
